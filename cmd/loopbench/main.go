// Command loopbench measures agentbox's messaging loop from outside: it
// starts a fresh `agentbox serve` (a built binary) on a fresh data
// directory per run, creates a box and agents with the admin CLI, and
// drives it over MCP (Streamable HTTP, one session per agent, the go-sdk
// client) as agents would:
//
//   - rt:N  one round trip at a time: send a DM, poll inbox_list until
//     it is shown, ACK it, N times;
//   - WxN   W senders each send N DMs to one receiver, which polls
//     inbox_list with next/resume cursors (sleeping 10 ms after a poll
//     that brought nothing new) and ACKs up to 100 rows per call.
//
// Every DM body is 256 bytes. Per run it prints sends/s, delivered/s,
// end-to-end latency (send call's start to the page that shows the row,
// p50 and p99), lost, duplicated, invented and out-of-order rows, and the
// server's own cost per DM from the kernel: fsync+fdatasync calls
// (counted by strace on those two calls only, when strace is installed),
// bytes written to the block layer (/proc/PID/io write_bytes), CPU time
// (/proc/PID/stat utime+stime), its resident memory at the end, the size
// of its data directory per 1,000 DMs once it has shut down (the bbolt
// file and its journal: run 4x2500 for the figure after 10,000 DMs), and
// the one-minute load average when the run ended, since a loaded machine
// moves every other figure.
//
// Several -bin values (label=path) are run interleaved, run after run, so
// that a loaded machine's drift hits each alike; the summary gives each
// one's medians and, for two, their ratios. It exits 1 when any run lost,
// duplicated, invented or reordered a message, or failed.
//
// Usage:
//
//	loopbench -bin bin/agentbox [-bin old=/tmp/agentbox-old] [-runs 3] [-workloads rt:500,1x500,4x250,16x250]
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Stdout, os.Stderr))
}

// binaries is the repeated -bin flag.
type binaries []binary

type binary struct{ label, path string }

func (b *binaries) String() string { return fmt.Sprint(*b) }

func (b *binaries) Set(v string) error {
	label, path, ok := strings.Cut(v, "=")
	if !ok {
		path, label = v, fmt.Sprintf("bin%d", len(*b)+1)
	}
	*b = append(*b, binary{label, path})
	return nil
}

// workload is one -workloads entry: rt:N, or W x N.
type workload struct {
	name      string
	roundTrip bool
	w, n      int
}

func parseWorkloads(s string) ([]workload, error) {
	var out []workload
	for f := range strings.SplitSeq(s, ",") {
		f = strings.TrimSpace(f)
		var wl workload
		var err error
		if n, ok := strings.CutPrefix(f, "rt:"); ok {
			wl.roundTrip, wl.w = true, 1
			wl.n, err = strconv.Atoi(n)
		} else if ws, ns, ok := strings.Cut(f, "x"); ok {
			wl.w, err = strconv.Atoi(ws)
			if err == nil {
				wl.n, err = strconv.Atoi(ns)
			}
		} else {
			err = errors.New("want rt:N or WxN")
		}
		if err != nil || wl.w < 1 || wl.n < 1 {
			return nil, fmt.Errorf("workload %q: want rt:N or WxN with W, N ≥ 1", f)
		}
		wl.name = f
		out = append(out, wl)
	}
	return out, nil
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("loopbench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var bins binaries
	fs.Var(&bins, "bin", "agentbox binary to drive, label=path or path; repeat to compare (runs interleave)")
	wls := fs.String("workloads", "rt:500,1x500,4x250,16x250", "comma-separated workloads: rt:N (one round trip at a time) or WxN (W senders, N DMs each)")
	runs := fs.Int("runs", 1, "runs of each workload per binary")
	dir := fs.String("dir", os.TempDir(), "where each run's data directory is created (on the disk to measure: not tmpfs)")
	trace := fs.String("strace", "auto", "count the server's fsync/fdatasync calls with strace: auto (when installed), on, off")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if len(bins) == 0 {
		fmt.Fprintln(stderr, "loopbench: -bin is required")
		return 2
	}
	workloads, err := parseWorkloads(*wls)
	if err != nil {
		fmt.Fprintln(stderr, "loopbench:", err)
		return 2
	}
	traced := false
	switch *trace {
	case "auto":
		_, err := exec.LookPath("strace")
		traced = err == nil
	case "on":
		traced = true
	case "off":
	default:
		fmt.Fprintln(stderr, "loopbench: -strace: want auto, on or off")
		return 2
	}

	fmt.Fprintf(stdout, "loopbench: %d-byte DMs, runs interleaved; load average at start %s\n", bodySize, loadavg())
	fmt.Fprintln(stdout, header)
	results := map[string][]result{} // by label + workload
	failed := false
	for r := range *runs {
		for _, wl := range workloads {
			for _, b := range bins {
				res, err := measure(ctx, b.path, *dir, wl, traced)
				if err != nil {
					fmt.Fprintf(stderr, "loopbench: %s %s run %d: %v\n", b.label, wl.name, r+1, err)
					failed = true
					if ctx.Err() != nil {
						return 1
					}
					continue
				}
				if !res.tally.ok() {
					fmt.Fprintf(stderr, "loopbench: %s %s run %d: %v\n", b.label, wl.name, r+1, res.tally)
					failed = true
				}
				fmt.Fprintln(stdout, res.row(b.label, wl.name))
				results[b.label+" "+wl.name] = append(results[b.label+" "+wl.name], res)
			}
		}
	}
	fmt.Fprintf(stdout, "load average at end %s\n", loadavg())
	if *runs > 1 {
		fmt.Fprintf(stdout, "\nmedians of %d runs\n%s\n", *runs, header)
		for _, wl := range workloads {
			var meds []result
			for _, b := range bins {
				m := median(results[b.label+" "+wl.name])
				meds = append(meds, m)
				fmt.Fprintln(stdout, m.row(b.label, wl.name))
			}
			if len(bins) == 2 {
				fmt.Fprintln(stdout, ratioRow(bins[1].label+"/"+bins[0].label, wl.name, meds[0], meds[1]))
			}
		}
	}
	if failed {
		return 1
	}
	return 0
}

// result is one run's figures.
type result struct {
	tally         tallied
	sendsPerS     float64
	deliveredPerS float64
	p50, p99      time.Duration
	retriesPerDM  float64
	syncsPerDM    float64 // -1: not counted
	bytesPerDM    float64
	cpuPerDM      time.Duration
	rssEnd        int64
	dataPerKDM    float64 // bytes of the data directory per 1,000 DMs
	load1         float64 // one-minute load average at the run's end
	dms           int
}

const header = "binary     workload     sends/s  deliv/s  p50ms   p99ms  sync/DM  KB/DM  cpu-us/DM  RSS-MiB  MB/kDM  load1  retry/DM  lost dup inv ooo"

func (r result) row(label, wl string) string {
	syncs := "   -"
	if r.syncsPerDM >= 0 {
		syncs = fmt.Sprintf("%7.2f", r.syncsPerDM)
	}
	return fmt.Sprintf("%-10s %-11s %8.0f %8.0f %6.1f %7.1f  %s %6.1f %10.0f %8.1f %7.2f %6.1f %9.3f  %4d %3d %3d %3d",
		label, wl, r.sendsPerS, r.deliveredPerS, ms(r.p50), ms(r.p99), syncs, r.bytesPerDM/1024,
		float64(r.cpuPerDM.Microseconds()), float64(r.rssEnd)/(1<<20), r.dataPerKDM/(1<<20), r.load1, r.retriesPerDM,
		r.tally.Lost, r.tally.Dup, r.tally.Invented, r.tally.OutOfOrder)
}

func ratioRow(label, wl string, a, b result) string {
	q := func(x, y float64) float64 {
		if y == 0 {
			return 0
		}
		return x / y
	}
	return fmt.Sprintf("%-10s %-11s %7.2fx %7.2fx %6.2fx %6.2fx %7.2fx %5.2fx %9.2fx %7.2fx %6.2fx",
		label, wl, q(b.sendsPerS, a.sendsPerS), q(b.deliveredPerS, a.deliveredPerS),
		q(ms(b.p50), ms(a.p50)), q(ms(b.p99), ms(a.p99)), q(b.syncsPerDM, a.syncsPerDM),
		q(b.bytesPerDM, a.bytesPerDM), q(float64(b.cpuPerDM), float64(a.cpuPerDM)), q(float64(b.rssEnd), float64(a.rssEnd)),
		q(b.dataPerKDM, a.dataPerKDM))
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// median takes each figure's median across runs (figure by figure).
func median(rs []result) result {
	if len(rs) == 0 {
		return result{}
	}
	medF := func(get func(result) float64) float64 {
		v := make([]float64, len(rs))
		for i, r := range rs {
			v[i] = get(r)
		}
		slices.Sort(v)
		return v[len(v)/2]
	}
	return result{
		sendsPerS:     medF(func(r result) float64 { return r.sendsPerS }),
		deliveredPerS: medF(func(r result) float64 { return r.deliveredPerS }),
		p50:           time.Duration(medF(func(r result) float64 { return float64(r.p50) })),
		p99:           time.Duration(medF(func(r result) float64 { return float64(r.p99) })),
		retriesPerDM:  medF(func(r result) float64 { return r.retriesPerDM }),
		syncsPerDM:    medF(func(r result) float64 { return r.syncsPerDM }),
		bytesPerDM:    medF(func(r result) float64 { return r.bytesPerDM }),
		cpuPerDM:      time.Duration(medF(func(r result) float64 { return float64(r.cpuPerDM) })),
		rssEnd:        int64(medF(func(r result) float64 { return float64(r.rssEnd) })),
		dataPerKDM:    medF(func(r result) float64 { return r.dataPerKDM }),
		load1:         medF(func(r result) float64 { return r.load1 }),
	}
}

// measure runs one workload on a fresh server of bin.
func measure(ctx context.Context, bin, dir string, wl workload, traced bool) (result, error) {
	data, err := os.MkdirTemp(dir, "loopbench-")
	if err != nil {
		return result{}, err
	}
	defer os.RemoveAll(data)
	s, err := startServer(ctx, bin, data, traced)
	if err != nil {
		return result{}, err
	}
	defer s.stop()
	var box struct {
		BoxID string `json:"box_id"`
	}
	if err := s.admin(&box, "create-box", "--name", "loopbench"); err != nil {
		return result{}, err
	}
	ra, err := newAgent(ctx, s, box.BoxID, "receiver")
	if err != nil {
		return result{}, err
	}
	defer ra.cs.Close()
	senders := make([]*agent, wl.w)
	for i := range senders {
		if senders[i], err = newAgent(ctx, s, box.BoxID, fmt.Sprintf("sender-%d", i)); err != nil {
			return result{}, err
		}
		defer senders[i].cs.Close()
	}
	before, err := s.usage()
	if err != nil {
		return result{}, err
	}
	rec := &receiver{a: ra}
	var o outcome
	if wl.roundTrip {
		o, err = roundTrips(ctx, senders[0], rec, wl.n)
	} else {
		o, err = fanIn(ctx, senders, rec, wl.n)
	}
	if err != nil {
		return result{}, err
	}
	after, err := s.usage()
	if err != nil {
		return result{}, err
	}
	dms := wl.w * wl.n
	t := tally(o.sends, o.deliveries)
	res := result{
		tally:         t,
		dms:           dms,
		sendsPerS:     float64(len(o.sends)) / o.sendTime.Seconds(),
		deliveredPerS: float64(len(t.Latencies)) / o.deliver.Seconds(),
		p50:           percentile(t.Latencies, 0.50),
		p99:           percentile(t.Latencies, 0.99),
		retriesPerDM:  float64(o.retries) / float64(dms),
		syncsPerDM:    -1,
		bytesPerDM:    float64(after.writeBytes-before.writeBytes) / float64(dms),
		cpuPerDM:      (after.cpu - before.cpu) / time.Duration(dms),
		rssEnd:        after.rss,
	}
	if traced {
		res.syncsPerDM = float64(after.syncs-before.syncs) / float64(dms)
	}
	res.load1 = load1()
	s.stop() // a clean shutdown, so the data directory is at rest
	size, err := dataSize(data, s.trace)
	if err != nil {
		return result{}, err
	}
	res.dataPerKDM = float64(size) / (float64(dms) / 1000)
	return res, nil
}

// dataSize sums the sizes of the regular files under dir, skip aside.
func dataSize(dir, skip string) (int64, error) {
	var n int64
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() || path == skip {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		n += fi.Size()
		return nil
	})
	return n, err
}

// load1 is /proc/loadavg's one-minute average (0 when unreadable).
func load1() float64 {
	raw, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return 0
	}
	f := strings.Fields(string(raw))
	if len(f) == 0 {
		return 0
	}
	v, _ := strconv.ParseFloat(f[0], 64)
	return v
}

// loadavg is /proc/loadavg's three averages.
func loadavg() string {
	raw, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	f := strings.Fields(string(raw))
	if len(f) < 3 {
		return "?"
	}
	return strings.Join(f[:3], " ")
}
