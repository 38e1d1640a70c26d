// Package mototest runs moto (moto_server, a Python DynamoDB emulator) as a
// second, independent DynamoDB implementation for tests, beside minidyn
// (dynamotest). Two emulators written apart from each other and from this
// project catch adapter code that only works by one engine's accident.
//
// One moto_server serves the whole test binary: it is started on first use
// on a loopback port it picks itself (-p 0; the port is read from its
// banner, so no port is guessed or raced for), and dies with the test
// process (parent-death signal). Tests get isolation from fresh tables with
// unique names, not fresh servers.
//
// moto's known limit: it does not isolate concurrent writes (a condition
// check and the write it guards, or the items of two TransactWriteItems,
// may interleave with another request), so tests that race
// writers against each other and rely on isolation must stay on minidyn;
// NoIsolation names the reason for their skips.
//
// When python3 cannot import moto or moto_server is not on PATH, every test
// that asks for moto fails with an install hint, unless AGENTBOX_SKIP_MOTO=1
// is set outside CI (CI=true never skips): the project's machines have
// moto, so a missing one is a broken machine, not a reason to pass.
package mototest

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/agentbox/agentbox/internal/store/dynamo"
	"github.com/agentbox/agentbox/internal/store/dynamo/dynamotest"
)

// NoIsolation is the reason given for tests that do not run on moto.
const NoIsolation = "moto does not isolate concurrent writes (its condition checks and transactions " +
	"interleave with other requests' writes), so a race that relies on isolation cannot pass on it; " +
	"this test runs on minidyn and bbolt"

// installHint tells a developer how to get moto.
const installHint = "install moto with its server extra (pip install 'moto[server]==5.2.1'), " +
	"or set AGENTBOX_SKIP_MOTO=1 outside CI to skip the moto runs"

var (
	once     sync.Once
	endpoint string
	startErr error
)

// Endpoint returns the base URL of the test binary's moto_server, starting
// it on first use. It fails t when moto cannot run (see the package note).
func Endpoint(t testing.TB) string {
	t.Helper()
	once.Do(func() { endpoint, startErr = start() })
	if startErr != nil {
		if os.Getenv("CI") != "true" && os.Getenv("AGENTBOX_SKIP_MOTO") == "1" {
			t.Skipf("moto unavailable and AGENTBOX_SKIP_MOTO=1: %v", startErr)
		}
		t.Fatalf("mototest: %v; %s", startErr, installHint)
	}
	return endpoint
}

// Client returns a client for the test binary's moto_server.
func Client(t testing.TB) *dynamodb.Client {
	t.Helper()
	return dynamotest.NewClient(Endpoint(t))
}

// NewStore creates a fresh table on moto and returns a store on it whose
// expiry clock is now (time.Now when nil). The table is deleted when t
// ends.
func NewStore(t testing.TB, now func() time.Time) *dynamo.Store {
	t.Helper()
	client := Client(t)
	table := NewTable(t, client)
	s := dynamo.New(client, table, dynamo.Options{Now: now})
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// NewTable creates a fresh, uniquely named table on moto and deletes it when
// t ends (moto keeps tables for the life of the server).
func NewTable(t testing.TB, client *dynamodb.Client) string {
	t.Helper()
	table := dynamotest.NewTable(t, client)
	t.Cleanup(func() {
		_, _ = client.DeleteTable(context.Background(), &dynamodb.DeleteTableInput{TableName: &table})
	})
	return table
}

var banner = regexp.MustCompile(`Running on (http://127\.0\.0\.1:[0-9]+)`)

// readyProbes bounds the polls for a first answer after the banner.
const readyProbes = 50

func start() (string, error) {
	if err := exec.Command("python3", "-c", "import moto").Run(); err != nil {
		return "", fmt.Errorf("python3 cannot import moto: %w", err)
	}
	bin, err := exec.LookPath("moto_server")
	if err != nil {
		return "", fmt.Errorf("moto_server not on PATH: %w", err)
	}
	cmd := exec.Command(bin, "-H", "127.0.0.1", "-p", "0")
	// moto_server lives as long as this process and no longer.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	out, err := cmd.StderrPipe()
	if err != nil {
		return "", err
	}
	cmd.Stdout = cmd.Stderr
	if err := cmd.Start(); err != nil {
		return "", fmt.Errorf("start moto_server: %w", err)
	}
	url, err := readBanner(out)
	if err != nil {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		return "", err
	}
	// Keep draining its log so that moto never blocks on a full pipe.
	go func() { _, _ = io.Copy(io.Discard, out) }()
	if err := waitReady(url); err != nil {
		_ = cmd.Process.Kill()
		return "", err
	}
	return url, nil
}

// readBanner reads moto_server's output until it names the address it
// listens on; the server is bound by then.
func readBanner(r io.Reader) (string, error) {
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		if m := banner.FindStringSubmatch(sc.Text()); m != nil {
			return m[1], nil
		}
	}
	return "", errors.New("moto_server exited without naming its address")
}

// waitReady polls url until moto answers an HTTP request, a bounded number
// of times.
func waitReady(url string) error {
	var last error
	for range readyProbes {
		resp, err := http.Get(url + "/moto-api/")
		if err == nil {
			_ = resp.Body.Close()
			return nil
		}
		last = err
		time.Sleep(100 * time.Millisecond)
	}
	return fmt.Errorf("moto_server at %s does not answer: %w", url, last)
}
