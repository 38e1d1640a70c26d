package limits_test

import (
	"flag"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/agentbox/agentbox/internal/limits"
)

func TestParseRate(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want limits.Rate
		err  bool
	}{
		{"0", limits.Rate{}, false},
		{"5,60", limits.Rate{PerSecond: 5, Burst: 60}, false},
		{" 2.5 , 10 ", limits.Rate{PerSecond: 2.5, Burst: 10}, false},
		{"2.5", limits.Rate{PerSecond: 2.5, Burst: 3}, false},
		{"0,10", limits.Rate{}, false},
		{"", limits.Rate{}, true},
		{"-1,5", limits.Rate{}, true},
		{"5,0", limits.Rate{}, true},
		{"five", limits.Rate{}, true},
		{"Inf,3", limits.Rate{}, true},
		{"NaN", limits.Rate{}, true},
	} {
		got, err := limits.ParseRate(tc.in)
		if (err != nil) != tc.err || got != tc.want {
			t.Errorf("ParseRate(%q) = %+v, %v; want %+v, error %v", tc.in, got, err, tc.want, tc.err)
		}
	}
}

func TestFromEnv(t *testing.T) {
	env := map[string]string{
		"AGENTBOX_LIMIT_AGENT_MUTATIONS": "0",
		"AGENTBOX_LIMIT_BOX_CALLS":       "50,100",
		"AGENTBOX_QUOTA_SESSIONS":        "4",
	}
	c, err := limits.FromEnv(func(k string) string { return env[k] })
	if err != nil {
		t.Fatalf("FromEnv: %v", err)
	}
	want := limits.Default()
	want.AgentMutations = limits.Rate{}
	want.BoxCalls = limits.Rate{PerSecond: 50, Burst: 100}
	want.SessionsPerAgent = 4
	if c != want {
		t.Errorf("FromEnv = %+v, want %+v", c, want)
	}
	env["AGENTBOX_QUOTA_SPACES"] = "many-secret"
	_, err = limits.FromEnv(func(k string) string { return env[k] })
	if err == nil || !strings.Contains(err.Error(), "AGENTBOX_QUOTA_SPACES") || strings.Contains(err.Error(), "many-secret") {
		t.Errorf("FromEnv with a bad value: %v, want an error naming the variable, not the value", err)
	}
}

func TestRegisterFlags(t *testing.T) {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	c := limits.Default()
	limits.RegisterFlags(fs, &c)
	if err := fs.Parse([]string{"-limit-agent-mutations=0", "-quota-spaces=7", "-limit-auth-failures", "2,4"}); err != nil {
		t.Fatalf("Parse: %v", err)
	}
	if c.AgentMutations.On() || c.SpacesPerAgent != 7 || c.AuthFailures != (limits.Rate{PerSecond: 2, Burst: 4}) {
		t.Errorf("after flags: %+v", c)
	}
	if err := fs.Parse([]string{"-quota-sessions=-1"}); err == nil {
		t.Errorf("a negative quota was accepted")
	}
	for _, s := range limits.Settings() {
		if s.Env == "" || s.Flag == "" || s.Param == "" || s.Default == "" {
			t.Errorf("setting %+v lacks a name or default", s)
		}
	}
}

// TestLocalBound: a per-instance bucket admits burst + rate × T.
func TestLocalBound(t *testing.T) {
	l := limits.NewLocal(limits.Rate{PerSecond: 2, Burst: 5})
	start := time.Unix(1_000_000, 0)
	now := start
	admitted := 0
	for range 1000 {
		if ok, _ := l.Allow("k", now); ok {
			admitted++
		}
		now = now.Add(10 * time.Millisecond)
	}
	elapsed := now.Sub(start).Seconds()
	if max := 5 + int(2*elapsed); admitted > max || admitted < max-2 {
		t.Errorf("admitted %d over %.1fs, want about burst + rate×T = %d and never more", admitted, elapsed, max)
	}
	if ok, _ := l.Allow("other", start); !ok {
		t.Errorf("another key was limited")
	}
	var off *limits.Local
	if ok, _ := off.Allow("k", now); !ok {
		t.Errorf("a nil limiter limited")
	}
}

// TestLocalChargeBlocks: failures charged past the burst block the key
// for a bounded time.
func TestLocalChargeBlocks(t *testing.T) {
	l := limits.NewLocal(limits.Rate{PerSecond: 1, Burst: 3})
	now := time.Unix(1_000_000, 0)
	for range 3 {
		if blocked, _ := l.Blocked("ip", now); blocked {
			t.Fatalf("blocked before the burst was spent")
		}
		l.Charge("ip", now)
	}
	blocked, wait := l.Blocked("ip", now)
	if !blocked || wait <= 0 {
		t.Fatalf("Blocked after the burst = %v, %v; want blocked with a wait", blocked, wait)
	}
	for range 100 {
		l.Charge("ip", now)
	}
	if blocked, _ := l.Blocked("ip", now.Add(10*time.Second)); blocked {
		t.Errorf("still blocked 10s after failures stopped: debt must be bounded")
	}
}

// TestREADMEListsSettings: the README's table of limits names every
// setting with its flag, variable, parameter and default, so the two
// cannot drift apart.
func TestREADMEListsSettings(t *testing.T) {
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(b), "\n")
	for _, s := range limits.Settings() {
		want := []string{"`--" + s.Flag + "`", "`" + s.Env + "`", "`" + s.Param + "`", "`" + s.Default + "`"}
		found := false
		for _, l := range lines {
			ok := true
			for _, w := range want {
				ok = ok && strings.Contains(l, w)
			}
			found = found || ok
		}
		if !found {
			t.Errorf("README has no table row with %v", want)
		}
	}
}
