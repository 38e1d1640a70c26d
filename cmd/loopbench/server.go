package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// server is one `agentbox serve` child on its own data directory.
type server struct {
	bin, data string
	cmd       *exec.Cmd
	pid       int    // the server's own process (strace's child when traced)
	mcpURL    string // http://host:port/mcp
	trace     string // strace's output file, "" when not traced
	stderr    bytes.Buffer
	stopped   bool
}

// unlimited turns off the hub's rate limits: the load is the point.
var unlimited = []string{
	"--limit-agent-mutations", "0", "--limit-box-mutations", "0",
	"--limit-agent-calls", "0", "--limit-box-calls", "0",
}

// startServer starts bin serve on the data directory data (created when
// missing), on a free loopback port. With traced it runs under strace, which records
// every fsync and fdatasync the server makes (and stops it on those calls
// only: --seccomp-bpf), so syncs are counted from the kernel's side.
func startServer(ctx context.Context, bin, data string, traced bool) (*server, error) {
	var err error
	s := &server{bin: bin, data: data}
	args := append([]string{"serve", "--addr", "127.0.0.1:0", "--data", data, "--log-level", "error"}, unlimited...)
	name := bin
	if traced {
		s.trace = filepath.Join(data, "syncs.strace")
		args = append([]string{"--seccomp-bpf", "-f", "-qq", "-e", "trace=fsync,fdatasync", "-o", s.trace, "--", bin}, args...)
		name = "strace"
	}
	s.cmd = exec.CommandContext(ctx, name, args...)
	s.cmd.Stderr = &s.stderr
	out, err := s.cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := s.cmd.Start(); err != nil {
		return nil, err
	}
	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if f := strings.Fields(sc.Text()); len(f) == 2 && f[0] == "MCP:" {
				found <- f[1]
			}
		}
		close(found)
	}()
	select {
	case u, ok := <-found:
		if !ok {
			_ = s.cmd.Wait()
			return nil, fmt.Errorf("agentbox serve ended before serving: %s", s.stderr.String())
		}
		s.mcpURL = u
	case <-time.After(30 * time.Second):
		s.kill()
		return nil, fmt.Errorf("agentbox serve did not start in 30 s: %s", s.stderr.String())
	}
	s.pid = s.cmd.Process.Pid
	if traced {
		if s.pid, err = childOf(s.pid); err != nil {
			s.kill()
			return nil, err
		}
	}
	return s, nil
}

// childOf returns the one child process of pid (strace's tracee).
func childOf(pid int) (int, error) {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%d/children", pid, pid))
	if err != nil {
		return 0, err
	}
	f := strings.Fields(string(raw))
	if len(f) != 1 {
		return 0, fmt.Errorf("strace (pid %d) has children %q, want one", pid, f)
	}
	return strconv.Atoi(f[0])
}

// admin runs one admin command against the running server (through its
// admin socket, as an owner would) and decodes its JSON output into v.
func (s *server) admin(v any, args ...string) error {
	cmd := exec.Command(s.bin, append(append([]string{"admin"}, args...), "--data", s.data)...)
	var errb bytes.Buffer
	cmd.Stderr = &errb
	out, err := cmd.Output()
	if err != nil {
		return fmt.Errorf("agentbox admin %s: %v: %s", strings.Join(args, " "), err, errb.String())
	}
	return json.Unmarshal(out, v)
}

// stop ends the server: SIGTERM, then SIGKILL after 10 s. Once: a second
// call does nothing (the pid may be another process's by then).
func (s *server) stop() {
	if s.stopped {
		return
	}
	s.stopped = true
	if p, err := os.FindProcess(s.pid); err == nil {
		_ = p.Signal(syscall.SIGTERM)
	}
	done := make(chan struct{})
	go func() { _ = s.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		s.kill()
		<-done
	}
}

func (s *server) kill() {
	_ = s.cmd.Process.Kill()
	if s.pid != 0 && s.pid != s.cmd.Process.Pid {
		if p, err := os.FindProcess(s.pid); err == nil {
			_ = p.Kill()
		}
	}
}

// usage is a snapshot of the server's resource counters.
type usage struct {
	writeBytes int64 // /proc/PID/io write_bytes: bytes sent to the block layer
	cpu        time.Duration
	rss        int64 // bytes, /proc/PID/status VmRSS
	syncs      int   // fsync + fdatasync calls so far (-1 when not traced)
}

// clockTick is the kernel's USER_HZ, which /proc/PID/stat counts in; it is
// 100 on every Linux ABI Go supports.
const clockTick = 100

func (s *server) usage() (usage, error) {
	var u usage
	io, err := os.ReadFile(fmt.Sprintf("/proc/%d/io", s.pid))
	if err != nil {
		return u, err
	}
	if u.writeBytes, err = procField(io, "write_bytes:"); err != nil {
		return u, err
	}
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", s.pid))
	if err != nil {
		return u, err
	}
	// Fields after the command name, which may hold spaces: state is the
	// first, utime the 12th and stime the 13th.
	f := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+1:]))
	if len(f) < 13 {
		return u, fmt.Errorf("short /proc/%d/stat", s.pid)
	}
	ut, err1 := strconv.ParseInt(f[11], 10, 64)
	st, err2 := strconv.ParseInt(f[12], 10, 64)
	if err := errors.Join(err1, err2); err != nil {
		return u, err
	}
	u.cpu = time.Duration(ut+st) * time.Second / clockTick
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", s.pid))
	if err != nil {
		return u, err
	}
	kb, err := procField(status, "VmRSS:")
	if err != nil {
		return u, err
	}
	u.rss = kb * 1024
	u.syncs = -1
	if s.trace != "" {
		if u.syncs, err = countSyncs(s.trace); err != nil {
			return u, err
		}
	}
	return u, nil
}

// procField reads the number after name in a /proc key-value file.
func procField(raw []byte, name string) (int64, error) {
	for line := range strings.SplitSeq(string(raw), "\n") {
		if rest, ok := strings.CutPrefix(line, name); ok {
			return strconv.ParseInt(strings.Fields(rest)[0], 10, 64)
		}
	}
	return 0, fmt.Errorf("no %s in /proc", name)
}

// countSyncs counts the completed sync calls strace has recorded so far.
func countSyncs(path string) (int, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	n := 0
	r := bufio.NewReader(f)
	for {
		line, err := r.ReadString('\n')
		if strings.Contains(line, "sync(") && !strings.Contains(line, "<unfinished") {
			n++
		} else if strings.Contains(line, "resumed>") && strings.Contains(line, "sync") {
			n++
		}
		if err == io.EOF {
			return n, nil
		}
		if err != nil {
			return 0, err
		}
	}
}
