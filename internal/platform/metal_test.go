package platform

import (
	"context"
	"errors"
	"testing"
)

func TestMetal(t *testing.T) {
	got, err := newMetal(Env{}).FetchConfig(context.Background())
	if !errors.Is(err, ErrNoConfig) || got != nil {
		t.Errorf("metal FetchConfig() = %q, %v, want ErrNoConfig", got, err)
	}
}
