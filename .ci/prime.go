//go:build ignore

// prime is fresh-check's client: it calls agent_prime over REST on a
// running `make run` with an agent key and fails unless the answer is 200
// with a session_id. A Go program, so that the check needs no curl or jq.
//
//	go run .ci/prime.go http://127.0.0.1:8787/v1 abk_…
package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"strings"
	"time"
)

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: go run .ci/prime.go REST_BASE_URL AGENT_KEY")
		os.Exit(2)
	}
	req, err := http.NewRequest("POST", strings.TrimSuffix(os.Args[1], "/")+"/agent/prime", strings.NewReader("{}"))
	if err != nil {
		fail(err)
	}
	req.Header.Set("Authorization", "Bearer "+os.Args[2])
	req.Header.Set("Content-Type", "application/json")
	res, err := (&http.Client{Timeout: 10 * time.Second}).Do(req)
	if err != nil {
		fail(err)
	}
	defer res.Body.Close()
	var out struct {
		SessionID string `json:"session_id"`
	}
	if err := json.NewDecoder(res.Body).Decode(&out); err != nil || res.StatusCode != http.StatusOK || out.SessionID == "" {
		fail(fmt.Errorf("agent_prime answered HTTP %d without a session_id (decode: %v)", res.StatusCode, err))
	}
	fmt.Println("agent_prime: 200, session_id present")
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "prime:", err)
	os.Exit(1)
}
