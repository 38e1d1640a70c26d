// Package server is `agentbox serve`: the whole service in one process,
// on the embedded bbolt store (no AWS) or on a DynamoDB table.
//
// One process serves from one hub:
//
//   - the agent plane over TCP: REST under /v1/, MCP at /mcp, GET /healthz;
//   - on bbolt, the admin plane on the unix socket <data>/admin.sock,
//     because bbolt's exclusive file lock keeps the admin CLI from opening
//     the store while the server runs (see internal/admincli).
//
// On a DynamoDB table (Config.Table) the store is the same adapter the
// Lambda functions run, there is no data directory, admin socket or
// sweeper: the admin CLI works on the table directly (--table), and
// DynamoDB's TTL removes expired items (the adapter hides them until then).
// That is the always-on server for a team on DynamoDB, and the `sam local`
// path without Docker when the table is on moto or DynamoDB Local.
//
// Start order matters: the store is opened (taking the lock) before the
// admin socket is created, which is what makes removing a stale socket
// safe; on shutdown both listeners drain before the store closes.
package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/agentbox/agentbox/internal/admincli"
	"github.com/agentbox/agentbox/internal/ctxtime"
	"github.com/agentbox/agentbox/internal/hub"
	"github.com/agentbox/agentbox/internal/limits"
	"github.com/agentbox/agentbox/internal/mcpserver"
	"github.com/agentbox/agentbox/internal/oauth"
	"github.com/agentbox/agentbox/internal/opview"
	"github.com/agentbox/agentbox/internal/registry"
	"github.com/agentbox/agentbox/internal/rest"
	"github.com/agentbox/agentbox/internal/store"
	"github.com/agentbox/agentbox/internal/store/bolt"
	"github.com/agentbox/agentbox/internal/store/dynamo"
	"github.com/agentbox/agentbox/internal/webhook"
)

// DefaultAddr is the listen address of `agentbox serve` and `make run`:
// loopback, because the local server speaks plain HTTP and agent keys
// travel in its headers.
const DefaultAddr = "127.0.0.1:8787"

// HTTP server timeouts. Every response of the agent plane is one JSON body
// (the MCP endpoint runs in JSON-response mode and offers no GET stream), so
// a bounded write timeout cuts nothing legitimate.
const (
	readHeaderTimeout = 5 * time.Second
	readTimeout       = 30 * time.Second
	writeTimeout      = 60 * time.Second
	idleTimeout       = 2 * time.Minute
	maxHeaderBytes    = 64 << 10
	// DefaultLockTimeout is how long start-up waits for the store's file
	// lock: long enough to outwait an admin CLI command that holds it for a
	// moment, short enough that a second server on the same data directory
	// fails visibly instead of hanging.
	DefaultLockTimeout = 5 * time.Second
	// DefaultShutdownTimeout bounds draining in-flight requests.
	DefaultShutdownTimeout = 10 * time.Second
)

// Config configures a Server. The zero value serves on DefaultAddr from
// ./.agentbox.
type Config struct {
	// Addr is the TCP listen address (default DefaultAddr). Port 0 picks a
	// free port; Server.URL reports it.
	Addr string
	// DataDir holds the database and the admin socket (default
	// admincli.DefaultDataDir). It is created mode 0700 when missing.
	DataDir string
	// Logger receives JSON logs (default: discard).
	Logger *slog.Logger
	// ShutdownTimeout bounds graceful shutdown (default
	// DefaultShutdownTimeout).
	ShutdownTimeout time.Duration
	// LockTimeout bounds the wait for the store's file lock (default
	// DefaultLockTimeout); past it Start fails with bolt.ErrLocked.
	LockTimeout time.Duration

	// Table, when set, serves from this DynamoDB table instead of the
	// embedded store; DataDir and LockTimeout are then unused.
	Table string
	// Endpoint replaces the regional DynamoDB endpoint (moto, DynamoDB
	// Local); see dynamo.Config. Credentials come from the environment.
	Endpoint string
	// Region is the AWS region of Table (default: the SDK's resolution).
	Region string
	// CreateTable creates Table first when it does not exist; with
	// Endpoint only, since a deployed stack's table belongs to its template.
	CreateTable bool
	// Limits are the rate limits and quotas (default limits.Default();
	// each figure 0 turns it off).
	Limits *limits.Config
	// Webhooks are the embedded store's dispatcher client options; the
	// zero value is the production egress guard. Tests set a receiver's
	// TLS roots and its loopback address here.
	Webhooks webhook.ClientOptions
	// OAuth, when set, accepts access tokens of its issuer beside agent
	// keys and serves the protected resource metadata (internal/oauth).
	OAuth *oauth.Config
}

// validate refuses flag combinations that would silently be ignored.
func (c Config) validate() error {
	if c.Table == "" && (c.Endpoint != "" || c.Region != "" || c.CreateTable) {
		return errors.New("server: endpoint, region and create-table need a table")
	}
	if c.CreateTable && c.Endpoint == "" {
		return errors.New("server: create-table needs an endpoint: a deployed stack's table is created by its template")
	}
	return nil
}

// Server is a running local service.
type Server struct {
	cfg     Config
	log     *slog.Logger
	store   store.Store
	api     *http.Server
	admin   *http.Server
	apiLn   net.Listener
	adminLn net.Listener
	errc    chan error
	// stopSweep ends the TTL sweeper; sweepDone closes when it has.
	stopSweep context.CancelFunc
	sweepDone chan struct{}
}

// sweepInterval is how often the embedded store deletes expired sessions,
// idempotency records and receipts (DynamoDB's TTL does this in AWS).
const sweepInterval = 10 * time.Minute

// Start opens the store, binds both listeners and starts serving. It
// returns once the server accepts connections; call Shutdown to stop it.
func Start(cfg Config) (_ *Server, err error) {
	if cfg.Addr == "" {
		cfg.Addr = DefaultAddr
	}
	if cfg.DataDir == "" {
		cfg.DataDir = admincli.DefaultDataDir
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.ShutdownTimeout <= 0 {
		cfg.ShutdownTimeout = DefaultShutdownTimeout
	}
	if cfg.LockTimeout <= 0 {
		cfg.LockTimeout = DefaultLockTimeout
	}
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	s := &Server{cfg: cfg, log: cfg.Logger, errc: make(chan error, 2)}
	defer func() {
		if err != nil {
			s.closeAll()
		}
	}()

	var embedded *bolt.Store
	if cfg.Table != "" {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		ds, err := dynamo.OpenTable(ctx, dynamo.Config{Region: cfg.Region, Endpoint: cfg.Endpoint},
			cfg.Table, cfg.CreateTable, dynamo.Options{})
		if err != nil {
			return nil, fmt.Errorf("server: open table: %w", err)
		}
		s.store = ds
	} else {
		// 0700: the directory holds the database (key hashes, every
		// message) and the admin socket, which grants owner rights to
		// whoever connects.
		if err := os.MkdirAll(cfg.DataDir, 0o700); err != nil {
			return nil, fmt.Errorf("server: create data directory: %w", err)
		}
		if err := checkDataDir(cfg.DataDir); err != nil {
			return nil, err
		}
		embedded, err = bolt.Open(filepath.Join(cfg.DataDir, admincli.DBName), bolt.Options{Timeout: cfg.LockTimeout})
		if errors.Is(err, bolt.ErrLocked) {
			return nil, fmt.Errorf("server: %w (is another 'agentbox serve' using %s?)", err, cfg.DataDir)
		}
		if err != nil {
			return nil, fmt.Errorf("server: open store: %w", err)
		}
		s.store = embedded
	}

	lim := cfg.Limits
	if lim == nil {
		d := limits.Default()
		lim = &d
	}
	// bbolt's group commit answers concurrent Writes in call order.
	opts := hub.Options{Logger: s.log, Limits: lim, OrderedWrites: embedded != nil}
	var res *oauth.Resource
	if cfg.OAuth != nil {
		if res, err = oauth.New(*cfg.OAuth); err != nil {
			return nil, fmt.Errorf("server: %w", err)
		}
		opts.Tokens = res
	}
	h := hub.New(s.store, opts)
	reg := registry.New()

	s.apiLn, err = net.Listen("tcp", cfg.Addr)
	if err != nil {
		return nil, fmt.Errorf("server: listen on %s: %w", cfg.Addr, err)
	}
	if tcp, ok := s.apiLn.Addr().(*net.TCPAddr); ok && !tcp.IP.IsLoopback() {
		s.log.Warn("listening beyond loopback over plain HTTP: agent keys cross the network unencrypted; put TLS in front",
			"addr", s.apiLn.Addr().String())
	}
	if embedded != nil {
		s.adminLn, err = admincli.Listen(cfg.DataDir)
		if err != nil {
			return nil, fmt.Errorf("server: %w", err)
		}
	}

	errLog := slog.NewLogLogger(s.log.Handler(), slog.LevelWarn)
	api := Handler(h, reg, s.log)
	if res != nil {
		api = res.Handler(api)
	}
	s.api = newHTTPServer(refuseAmbiguous(api), errLog)
	s.api.ConnContext = framedConnContext
	go s.serve(s.api, framedListener{s.apiLn})
	sweepCtx, stop := context.WithCancel(context.Background())
	s.stopSweep, s.sweepDone = stop, make(chan struct{})
	var sweepers sync.WaitGroup
	// The intent sweep finishes multi-write operations (a large fan-out,
	// a long ACK) whose caller vanished between chunks; on Lambda a
	// scheduled function does the same.
	sweepers.Go(func() { s.sweepIntents(sweepCtx, h) })
	if embedded != nil {
		// The webhook dispatcher delivers wake events to the owner's
		// endpoints (the service's only outbound requests;
		// internal/webhook). One process owns the embedded store, so one
		// dispatcher keeps at most one delivery in flight per endpoint; on
		// a shared table that takes the stack's Streams-driven dispatcher.
		disp := webhook.New(h, webhook.NewClient(cfg.Webhooks), s.log.With("component", "webhook"))
		h.OnAttention(disp.Wake)
		sweepers.Go(func() { disp.Run(sweepCtx) })
	}
	if embedded != nil {
		s.admin = newHTTPServer(admincli.SocketHandler(h.Admin(), s.log.With("component", "admin")), errLog)
		go s.serve(s.admin, s.adminLn)
		sweepers.Go(func() {
			embedded.SweepEvery(sweepCtx, sweepInterval, func(err error) {
				s.log.Warn("expired-item sweep failed", "err", err)
			})
		})
	}
	go func() {
		sweepers.Wait()
		close(s.sweepDone)
	}()
	if cfg.Table != "" {
		s.log.Info("agentbox serving", "addr", s.apiLn.Addr().String(), "table", cfg.Table)
		return s, nil
	}
	s.log.Info("agentbox serving", "addr", s.apiLn.Addr().String(), "data", cfg.DataDir)
	return s, nil
}

// intentSweepInterval is how often the server finishes abandoned intents.
const intentSweepInterval = 30 * time.Second

// sweepIntents runs the hub's intent sweep every intentSweepInterval until
// ctx ends.
func (s *Server) sweepIntents(ctx context.Context, h *hub.Hub) {
	ctxtime.Every(ctx, intentSweepInterval, func(ctx context.Context) {
		if n, err := h.Sweep(ctx, hub.SweepGrace, 100); err != nil {
			s.log.Warn("intent sweep failed", "err", err)
		} else if n > 0 {
			s.log.Info("intent sweep finished abandoned operations", "count", n)
		}
	})
}

// newHTTPServer is an HTTP server with the timeouts and limits above.
func newHTTPServer(h http.Handler, errLog *log.Logger) *http.Server {
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: readHeaderTimeout,
		ReadTimeout:       readTimeout,
		WriteTimeout:      writeTimeout,
		IdleTimeout:       idleTimeout,
		MaxHeaderBytes:    maxHeaderBytes,
		ErrorLog:          errLog,
	}
}

// checkDataDir refuses a data directory others may write to: whoever can
// write there can replace the admin socket (owner rights over every box)
// or the database. MkdirAll leaves an existing directory's mode as it is,
// so a directory made 0777 by someone else would otherwise be served from.
// Refusing, rather than changing the mode, leaves a directory another
// user may share untouched and makes the operator decide.
func checkDataDir(dir string) error {
	fi, err := os.Stat(dir)
	if err != nil {
		return fmt.Errorf("server: data directory: %w", err)
	}
	if !fi.IsDir() {
		return fmt.Errorf("server: data directory %s is not a directory", dir)
	}
	if perm := fi.Mode().Perm(); perm&0o022 != 0 {
		return fmt.Errorf("server: data directory %s is writable by group or others (mode %#o); run 'chmod 700 %s' and start again",
			dir, perm, dir)
	}
	return nil
}

func (s *Server) serve(srv *http.Server, ln net.Listener) {
	if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		s.errc <- err
	}
}

// Handler is the agent plane: REST under /v1/, MCP at /mcp, the
// read-only operator view at /ui/ (owner keys only) and a liveness
// probe at GET /healthz. The Lambda functions serve the same REST and MCP
// handlers; only this mux is local.
func Handler(h *hub.Hub, reg *registry.Registry, log *slog.Logger) http.Handler {
	mux := http.NewServeMux()
	mux.Handle("/v1/", rest.New(h, reg, log))
	mux.Handle("/mcp", mcpserver.New(h, reg, log))
	mux.Handle(opview.Prefix, opview.New(h, log))
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "no-store")
		_ = json.NewEncoder(w).Encode(map[string]string{"status": "ok"})
	})
	return mux
}

// URL returns the base URL of the agent plane, e.g. http://127.0.0.1:8787.
// An unspecified listen host (0.0.0.0, [::]) is shown as 127.0.0.1, the
// address that reaches it from this machine.
func (s *Server) URL() string {
	addr := s.apiLn.Addr().(*net.TCPAddr)
	host := addr.IP.String()
	if addr.IP.IsUnspecified() {
		host = "127.0.0.1"
	}
	return "http://" + net.JoinHostPort(host, fmt.Sprint(addr.Port))
}

// SocketPath returns the admin socket's path ("" on a DynamoDB table, which
// has none).
func (s *Server) SocketPath() string {
	if s.cfg.Table != "" {
		return ""
	}
	return filepath.Join(s.cfg.DataDir, admincli.SocketName)
}

// Shutdown stops accepting, drains in-flight requests within ctx, removes
// the admin socket and closes the store. Requests still running when ctx
// ends are cut off; the store closes after them either way.
func (s *Server) Shutdown(ctx context.Context) error {
	errA := s.api.Shutdown(ctx)
	if errA != nil {
		_ = s.api.Close()
	}
	var errB error
	if s.admin != nil {
		errB = s.admin.Shutdown(ctx)
		if errB != nil {
			_ = s.admin.Close()
		}
	}
	return errors.Join(errA, errB, s.closeAll())
}

// closeAll releases whatever Start acquired. The socket file goes first, so
// that a CLI never finds a socket without a server behind it while the
// store is still locked.
func (s *Server) closeAll() error {
	var errs []error
	if s.adminLn != nil {
		// Closing a unix listener unlinks its socket file.
		if err := s.adminLn.Close(); err != nil && !errors.Is(err, net.ErrClosed) {
			errs = append(errs, err)
		}
	}
	if s.apiLn != nil {
		if err := s.apiLn.Close(); err != nil && !errors.Is(err, net.ErrClosed) {
			errs = append(errs, err)
		}
	}
	if s.stopSweep != nil {
		s.stopSweep()
		<-s.sweepDone
	}
	if s.store != nil {
		if err := s.store.Close(); err != nil {
			errs = append(errs, err)
		}
		s.store = nil
	}
	return errors.Join(errs...)
}

// Run serves until ctx ends (SIGINT/SIGTERM in `agentbox serve`), then
// shuts down gracefully. It prints the MCP and REST URLs to out once the
// server accepts connections.
func Run(ctx context.Context, cfg Config, out io.Writer) error {
	s, err := Start(cfg)
	if err != nil {
		return err
	}
	if cfg.Table != "" {
		admin := "agentbox admin ... --table " + cfg.Table
		if cfg.Endpoint != "" {
			admin += " --endpoint " + cfg.Endpoint
		}
		if cfg.Region != "" {
			admin += " --region " + cfg.Region
		}
		fmt.Fprintf(out, "agentbox is serving on DynamoDB table %s\n  MCP:   %s/mcp\n  REST:  %s/v1\n  view:  %s/ui/\n  admin: %s\n",
			cfg.Table, s.URL(), s.URL(), s.URL(), admin)
	} else {
		fmt.Fprintf(out, "agentbox is serving\n  MCP:   %s/mcp\n  REST:  %s/v1\n  view:  %s/ui/ (owner key: agentbox admin create-owner-key --box BOX)\n  admin: %s (agentbox admin ... --data %s)\n",
			s.URL(), s.URL(), s.URL(), s.SocketPath(), s.cfg.DataDir)
	}
	var serveErr error
	select {
	case <-ctx.Done():
		s.log.Info("shutting down")
	case serveErr = <-s.errc:
		s.log.Error("listener failed; shutting down", "err", serveErr)
	}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.cfg.ShutdownTimeout)
	defer cancel()
	if err := s.Shutdown(sctx); err != nil {
		return errors.Join(serveErr, fmt.Errorf("server: shutdown: %w", err))
	}
	if serveErr != nil {
		return fmt.Errorf("server: %w", serveErr)
	}
	return nil
}
