package engine

import (
	"context"
	"errors"
	"testing"

	"github.com/flintboot/flint/internal/stages"
)

// stageFunc is a stage made of a function.
type stageFunc func(ctx context.Context, e *stages.Env) error

func (f stageFunc) Run(ctx context.Context, e *stages.Env) error { return f(ctx, e) }

func TestStageRecords(t *testing.T) {
	h := newHarness(t, "", serve(`{"ignition":{"version":"3.4.0"}}`))
	list := func(Options) []row {
		return []row{
			{name: "kargs", stage: stageFunc(func(context.Context, *stages.Env) error { return nil })},
			{name: "disks", stage: stageFunc(func(_ context.Context, e *stages.Env) error {
				e.State.NotatedDirectories = []string{"/not-saved"}
				return errors.New("device /dev/vdb:\nnot found\x1b[31m")
			})},
		}
	}
	for _, name := range []string{"kargs", "disks"} {
		o := h.opts
		o.Stage = name
		err := run(context.Background(), o, list)
		if (err != nil) != (name == "disks") {
			t.Fatalf("run(%s) = %v", name, err)
		}
	}
	s := h.state()
	if len(s.Stages) != 2 {
		t.Fatalf("state.Stages = %+v, want 2 records", s.Stages)
	}
	if r := s.Stages[0]; r.Name != "kargs" || r.Outcome != "success" || r.Error != "" || r.Start.IsZero() {
		t.Errorf("record 0 = %+v, want kargs, success", r)
	}
	if r := s.Stages[1]; r.Name != "disks" || r.Outcome != "failure" || r.Error != `device /dev/vdb:\nnot found\x1b[31m` {
		t.Errorf("record 1 = %+v, want disks, failure, the error escaped", r)
	}
	if len(s.NotatedDirectories) != 0 {
		t.Errorf("state.NotatedDirectories = %v: a failed stage's state was saved", s.NotatedDirectories)
	}
}
