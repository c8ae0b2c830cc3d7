package sys

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os/exec"
	"strings"
	"testing"
	"testing/iotest"
)

func TestFilter(t *testing.T) {
	for _, tool := range []string{"sh", "tr"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s not found", tool)
		}
	}
	in := strings.Repeat("abc", 1<<20)
	r, err := Runner{}.Filter(context.Background(), strings.NewReader(in), "tr", "a", "x")
	if err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(r)
	if err != nil || string(got) != strings.ReplaceAll(in, "a", "x") {
		t.Errorf("tr through Filter: %d bytes, %v", len(got), err)
	}

	// A failing command: its exit status and standard error.
	r, _ = Runner{}.Filter(context.Background(), strings.NewReader("x"), "sh", "-c", "cat >/dev/null; echo broken >&2; exit 3")
	_, err = io.ReadAll(r)
	var ce *CommandError
	if !errors.As(err, &ce) || ce.ExitCode != 3 || ce.Stderr != "broken" {
		t.Errorf("failing filter: %v", err)
	}

	// The input failing: its error, not the command's.
	boom := errors.New("connection reset")
	r, _ = Runner{}.Filter(context.Background(), io.MultiReader(strings.NewReader("abc"), iotest.ErrReader(boom)), "cat")
	if _, err := io.ReadAll(r); !errors.Is(err, boom) {
		t.Errorf("filter with failing input: %v, want %v", err, boom)
	}

	// Close before the end stops the command.
	r, _ = Runner{}.Filter(context.Background(), bytes.NewReader(make([]byte, 10<<20)), "cat")
	r.Read(make([]byte, 10))
	if err := r.Close(); err != nil {
		t.Errorf("Close = %v", err)
	}
}
