package sys

import (
	"context"
	"errors"
	"os/exec"
	"strings"
	"testing"
	"time"
)

func TestRunner(t *testing.T) {
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip("no sh on this machine")
	}
	tests := []struct {
		name       string
		argv       []string
		wantOut    string
		wantCode   int // -2: no error
		wantStderr string
		wantInErr  string
	}{
		{"success", []string{"sh", "-c", "echo out; echo err >&2"}, "out\n", -2, "", ""},
		{"exit status", []string{"sh", "-c", "echo partial; echo '  no such disk  ' >&2; exit 3"}, "partial\n", 3, "no such disk", `sh -c "echo partial; echo '  no such disk  ' >&2; exit 3": exit status 3: no such disk`},
		{"not found", []string{"/nonexistent/flint-test-cmd", "a b"}, "", -1, "", `/nonexistent/flint-test-cmd "a b": `},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := Runner{}.Run(context.Background(), tt.argv[0], tt.argv[1:]...)
			if string(out) != tt.wantOut {
				t.Errorf("Run(%q) stdout = %q, want %q", tt.argv, out, tt.wantOut)
			}
			if tt.wantCode == -2 {
				if err != nil {
					t.Fatalf("Run(%q) = %v, want success", tt.argv, err)
				}
				return
			}
			var ce *CommandError
			if !errors.As(err, &ce) {
				t.Fatalf("Run(%q) = %v, want a *CommandError", tt.argv, err)
			}
			if ce.ExitCode != tt.wantCode || ce.Stderr != tt.wantStderr {
				t.Errorf("Run(%q) = exit %d stderr %q, want exit %d stderr %q", tt.argv, ce.ExitCode, ce.Stderr, tt.wantCode, tt.wantStderr)
			}
			if strings.Join(ce.Argv, " ") != strings.Join(tt.argv, " ") {
				t.Errorf("Run(%q) error argv = %q", tt.argv, ce.Argv)
			}
			if !strings.Contains(err.Error(), tt.wantInErr) {
				t.Errorf("Run(%q) error = %q, want it to contain %q", tt.argv, err, tt.wantInErr)
			}
		})
	}
}

func TestRunnerContext(t *testing.T) {
	if _, err := exec.LookPath("sleep"); err != nil {
		t.Skip("no sleep on this machine")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	_, err := Runner{}.Run(ctx, "sleep", "10")
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Run(sleep 10) past its deadline = %v, want context.DeadlineExceeded", err)
	}
}

// A command killed at its deadline can leave a child holding its output
// pipes (a forking helper, a shell's background job); Run must not wait
// for that child.
func TestRunnerContextOrphanHoldsOutput(t *testing.T) {
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip("no sh on this machine")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := Runner{}.Run(ctx, "sh", "-c", "sleep 10 & sleep 10")
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("Run(sh with a background child) returned after %v, want soon after its 100ms deadline", d.Round(time.Millisecond))
	}
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Run(sh with a background child) past its deadline = %v, want context.DeadlineExceeded", err)
	}
}

func TestTrimStderr(t *testing.T) {
	long := strings.Repeat("x", maxStderr) + "the reason"
	got := trimStderr([]byte(long + "\n"))
	if !strings.HasSuffix(got, "the reason") || len(got) > maxStderr+len("…") {
		t.Errorf("trimStderr(long) = %d bytes ending %q, want the last %d bytes", len(got), got[len(got)-10:], maxStderr)
	}
}
