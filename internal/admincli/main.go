package admincli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/agentbox/agentbox/internal/apperr"
	"github.com/agentbox/agentbox/internal/hub"
	"github.com/agentbox/agentbox/internal/reqlog"
	"github.com/agentbox/agentbox/internal/store"
	"github.com/agentbox/agentbox/internal/store/bolt"
	"github.com/agentbox/agentbox/internal/store/dynamo"
	"github.com/agentbox/agentbox/internal/strictjson"
)

// Exit codes of Main.
const (
	ExitOK    = 0
	ExitError = 1
	ExitUsage = 2
)

// DefaultDataDir is the embedded store's directory when --data is not
// given; `agentbox serve` uses the same default.
const DefaultDataDir = ".agentbox"

// DBName is the bbolt file's name inside the data directory.
const DBName = "agentbox.db"

// Lock timeouts. The first open is short because a running server holds the
// lock for its whole life, and then the socket answers at once. The second,
// after the socket did not answer, waits out another CLI command that holds
// the file for a moment.
const lockProbe = 250 * time.Millisecond

var lockWait = 5 * time.Second

// target is where commands run: the embedded store in a data directory, or
// a DynamoDB table.
type target struct {
	data        string
	table       string
	endpoint    string
	region      string
	createTable bool
	// init lets any command create the embedded store when it does not
	// exist yet; without it only create-box does, so a mistyped --data
	// (or a command run outside the directory `serve` uses) fails instead
	// of answering from a new, empty store.
	init bool
}

// register declares the target flags on fs. Every command accepts them,
// before or after the command name; the current values are the defaults,
// so flags given before the command survive the second parse.
func (t *target) register(fs *flag.FlagSet) {
	fs.StringVar(&t.data, "data", t.data, "embedded store directory (the one `agentbox serve --data` uses)")
	fs.StringVar(&t.table, "table", t.table, "DynamoDB table of a deployed stack (the stack's TableName output) instead of --data")
	fs.StringVar(&t.endpoint, "endpoint", t.endpoint, "DynamoDB endpoint URL, e.g. http://127.0.0.1:8000 for DynamoDB Local (with --table)")
	fs.StringVar(&t.region, "region", t.region, "AWS region (with --table; default from AWS_REGION or the shared config)")
	fs.BoolVar(&t.createTable, "create-table", t.createTable, "create the table first if it does not exist (with --table and --endpoint only: a deployed stack's table belongs to its template)")
	fs.BoolVar(&t.init, "init", t.init, "create the embedded store in --data if it does not exist (create-box always may)")
}

func (t *target) validate(dataSet bool) error {
	if t.table == "" {
		if t.endpoint != "" || t.region != "" || t.createTable {
			return errors.New("--endpoint, --region and --create-table need --table")
		}
		if t.data == "" {
			return errors.New("--data must not be empty")
		}
		return nil
	}
	if dataSet {
		return errors.New("--data and --table are exclusive")
	}
	if t.init {
		return errors.New("--init is for the embedded store (--data); a table is created with --create-table")
	}
	if t.createTable && t.endpoint == "" {
		return errors.New("--create-table needs --endpoint: a deployed stack's table is created by its template")
	}
	return nil
}

// Main runs `agentbox admin` with args (after "admin") and returns the
// process exit code. It writes one JSON document to stdout on success, and
// one {"error": ...} document to stderr on failure.
func Main(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	req, t, err := parse(args)
	if errors.Is(err, flag.ErrHelp) {
		if c, ok := lookup(req.Command); ok {
			fmt.Fprint(stdout, c.usage())
		} else {
			fmt.Fprint(stdout, Usage())
		}
		return ExitOK
	}
	if err != nil {
		printError(stderr, apperr.Invalid("", err.Error()).WithNext(helpNext))
		return ExitUsage
	}
	if err := readFiles(req); err != nil {
		printError(stderr, err)
		return ExitError
	}
	res := dispatch(ctx, t, req, reqlog.NewLogger(stderr, slog.LevelWarn))
	if res.Error != nil {
		writeJSON(stderr, res.errorDoc())
		return ExitError
	}
	writeJSON(stdout, res.Result)
	return ExitOK
}

// parse turns the command line into a request and its target. Every error
// it returns is a usage error.
func parse(args []string) (Request, *target, error) {
	t := &target{data: DefaultDataDir}
	global := flag.NewFlagSet("agentbox admin", flag.ContinueOnError)
	global.SetOutput(io.Discard)
	t.register(global)
	if err := global.Parse(args); err != nil {
		return Request{}, nil, err
	}
	dataSet := false
	global.Visit(func(f *flag.Flag) { dataSet = dataSet || f.Name == "data" })
	rest := global.Args()
	if len(rest) == 0 {
		return Request{}, nil, errors.New("missing command")
	}
	if rest[0] == "help" {
		if len(rest) > 1 {
			if _, ok := lookup(rest[1]); !ok {
				return Request{}, nil, fmt.Errorf("help: unknown command %q", rest[1])
			}
			return Request{Command: rest[1]}, nil, flag.ErrHelp
		}
		return Request{}, nil, flag.ErrHelp
	}
	cmd, ok := lookup(rest[0])
	if !ok {
		return Request{}, nil, fmt.Errorf("unknown command %q", rest[0])
	}

	fs := flag.NewFlagSet("agentbox admin "+cmd.Name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	t.register(fs)
	values := make(map[string]*string, len(cmd.Flags))
	switches := map[string]*bool{}
	for _, f := range cmd.Flags {
		if f.Switch {
			switches[f.Name] = fs.Bool(f.Name, false, f.Usage)
			continue
		}
		values[f.Name] = fs.String(f.Name, "", f.Usage)
	}
	if err := fs.Parse(rest[1:]); err != nil {
		return Request{Command: cmd.Name}, nil, err
	}
	if fs.NArg() > 0 {
		return Request{}, nil, fmt.Errorf("%s: unexpected argument %q (flags take --name value)", cmd.Name, fs.Arg(0))
	}
	req := Request{Command: cmd.Name, Args: Args{}}
	fs.Visit(func(f *flag.Flag) {
		if p, ok := values[f.Name]; ok {
			req.Args[f.Name] = *p
		}
		if p, ok := switches[f.Name]; ok && *p {
			req.Args[f.Name] = "true"
		}
		dataSet = dataSet || f.Name == "data"
	})
	if err := cmd.check(req.Args); err != nil {
		return Request{}, nil, err
	}
	if err := t.validate(dataSet); err != nil {
		return Request{}, nil, err
	}
	return req, t, nil
}

// readFiles replaces the value of each File flag by the file's contents.
func readFiles(req Request) error {
	cmd, _ := lookup(req.Command)
	for _, f := range cmd.Flags {
		if !f.File || req.Args[f.Name] == "" {
			continue
		}
		b, err := readFile(req.Args[f.Name])
		if err != nil {
			return apperr.Wrap(apperr.InvalidArgument, "--"+f.Name+": the file cannot be read.", err).
				WithNext("Check the path and the file's permissions.")
		}
		req.Args[f.Name] = string(b)
	}
	return nil
}

func readFile(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("cannot open the file: %w", err)
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxFileBytes+1))
	if err != nil {
		return nil, fmt.Errorf("cannot read the file: %w", err)
	}
	if len(b) > maxFileBytes {
		return nil, fmt.Errorf("the file is larger than %d bytes", maxFileBytes)
	}
	return b, nil
}

// dispatch runs req on its target and renders the outcome.
func dispatch(ctx context.Context, t *target, req Request, log *slog.Logger) Response {
	if t.table != "" {
		st, err := openDynamo(ctx, t)
		if err != nil {
			return failure(apperr.Wrap(apperr.StorageFailure, "Cannot reach the DynamoDB table.", err))
		}
		defer st.Close()
		return run(ctx, hub.New(st, hub.Options{Logger: log}).Admin(), req)
	}

	db := filepath.Join(t.data, DBName)
	if _, err := os.Stat(db); errors.Is(err, fs.ErrNotExist) && !t.init && req.Command != "create-box" {
		return failure(apperr.New(apperr.NotFoundOrForbidden, "There is no agentbox store at "+db+".").
			WithNext("Pass the --data directory 'agentbox serve' uses (default .agentbox, relative to where it runs); " +
				"create a store with 'agentbox admin create-box', or pass --init to create an empty one."))
	}
	if err := os.MkdirAll(t.data, 0o700); err != nil {
		return failure(apperr.Wrap(apperr.StorageFailure, "Cannot create the data directory.", err))
	}
	st, err := bolt.Open(db, bolt.Options{Timeout: lockProbe})
	if errors.Is(err, bolt.ErrLocked) {
		res, serr := sendSocket(ctx, filepath.Join(t.data, SocketName), req)
		if serr == nil {
			return res
		}
		if !errors.Is(serr, errNoServer) {
			return failure(apperr.Wrap(apperr.StorageFailure, "The server's admin socket failed.", serr))
		}
		st, err = bolt.Open(db, bolt.Options{Timeout: lockWait})
		if errors.Is(err, bolt.ErrLocked) {
			return failure(apperr.Wrap(apperr.TemporarilyUnavailable,
				"The data directory is locked by another process that does not answer on its admin socket; retry when it has finished.", err))
		}
	}
	if err != nil {
		return failure(apperr.Wrap(apperr.StorageFailure, "Cannot open the embedded store.", err))
	}
	defer st.Close()
	return run(ctx, hub.New(st, hub.Options{Logger: log}).Admin(), req)
}

// openDynamo returns a store on t's table, creating the table first when
// asked to (local engines only; see target.validate).
func openDynamo(ctx context.Context, t *target) (store.Store, error) {
	s, err := dynamo.OpenTable(ctx, dynamo.Config{Region: t.region, Endpoint: t.endpoint}, t.table, t.createTable, dynamo.Options{})
	if err != nil {
		return nil, fmt.Errorf("admincli: %w", err)
	}
	return s, nil
}

// errorDoc is the document printed on stderr for a failure.
func (r Response) errorDoc() any {
	return struct {
		Error *apperr.Envelope `json:"error"`
		Cause string           `json:"cause,omitempty"`
	}{r.Error, r.Cause}
}

func printError(w io.Writer, err error) {
	writeJSON(w, failure(err).errorDoc())
}

// writeJSON prints v as one indented JSON document. A raw result (from
// either path) is re-indented as is, so field order is the result type's,
// identical whether the command ran here or behind the socket.
func writeJSON(w io.Writer, v any) {
	raw, ok := v.(json.RawMessage)
	if !ok {
		var err error
		// Without HTML escaping: the reader is a terminal or a script, and
		// instructions full of "<" should stay readable.
		if raw, err = strictjson.Marshal(v); err != nil {
			fmt.Fprintf(w, "{\"error\": {\"code\": %q, \"message\": \"cannot render the output\"}}\n", apperr.StorageFailure)
			return
		}
	}
	var buf bytes.Buffer
	if err := json.Indent(&buf, raw, "", "  "); err != nil {
		buf.Reset()
		buf.Write(raw)
	}
	buf.WriteByte('\n')
	_, _ = w.Write(buf.Bytes())
}

// Usage returns the admin CLI's help text, generated from the command
// table.
func Usage() string {
	var b strings.Builder
	b.WriteString(`Usage: agentbox admin [target flags] <command> [flags]

Every command prints one JSON document on stdout. Errors print
{"error": {...}} on stderr and exit 1 (usage errors exit 2).

Target (default: the embedded store in ./.agentbox; while 'agentbox serve'
holds that store, commands go through its admin socket automatically):
  --data DIR             embedded store directory (default .agentbox)
  --table NAME           DynamoDB table of a deployed stack
  --endpoint URL         DynamoDB endpoint (DynamoDB Local: http://127.0.0.1:8000)
  --region REGION        AWS region for --table
  --create-table         create the table if missing (only with --endpoint)
  --init                 create the embedded store if missing (create-box
                         always may; any other command fails on a missing
                         store rather than answer from an empty one)

Commands:
`)
	for _, c := range commands {
		c.describe(&b, "  ")
	}
	b.WriteString("\n'agentbox admin <command> --help' (or 'agentbox admin help <command>') shows one command.\n")
	return b.String()
}

// usage is one command's help text.
func (c *Command) usage() string {
	var b strings.Builder
	b.WriteString("Usage: agentbox admin [target flags] ")
	c.describe(&b, "")
	b.WriteString(`
Prints one JSON document on stdout; errors print {"error": {...}} on
stderr and exit 1 (usage errors exit 2). Target flags: --data DIR (default
.agentbox), --table NAME [--endpoint URL] [--region R] [--create-table],
--init; 'agentbox admin help' explains them and lists every command.
`)
	return b.String()
}

// describe writes the command's synopsis, summary and flags.
func (c *Command) describe(b *strings.Builder, indent string) {
	fmt.Fprintf(b, "%s%s", indent, c.Name)
	for _, f := range c.Flags {
		switch {
		case f.Switch:
			fmt.Fprintf(b, " [--%s]", f.Name)
		case f.Required:
			fmt.Fprintf(b, " --%s %s", f.Name, strings.ToUpper(f.Name))
		default:
			fmt.Fprintf(b, " [--%s %s]", f.Name, strings.ToUpper(f.Name))
		}
	}
	fmt.Fprintf(b, "\n%s    %s\n", indent, c.Summary)
	for _, f := range c.Flags {
		fmt.Fprintf(b, "%s    --%-10s %s\n", indent, f.Name, f.Usage)
	}
}
