package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"
)

func TestPxeWrapUnwrap(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "config.ign")
	img := filepath.Join(dir, "ignition.img")
	const config = `{"ignition": {"version": "3.4.0"}}`
	os.WriteFile(cfg, []byte(config), 0o644)
	var out, errOut bytes.Buffer
	if err := run(context.Background(), []string{"pxe", "ignition", "wrap", "-i", cfg, "-o", img}, nil, &out, &errOut); err != nil {
		t.Fatalf("wrap: %v", err)
	}
	if fi, err := os.Stat(img); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("ignition.img: %v, %v; want mode 0600", fi, err)
	}
	if err := run(context.Background(), []string{"pxe", "ignition", "unwrap", img}, nil, &out, &errOut); err != nil {
		t.Fatalf("unwrap: %v", err)
	}
	if out.String() != config {
		t.Errorf("unwrap printed %q, want %q", out.String(), config)
	}
	// stdin to stdout, both ways
	var wrapped, back bytes.Buffer
	if err := run(context.Background(), []string{"pxe", "ignition", "wrap"}, bytes.NewReader([]byte(config)), &wrapped, &errOut); err != nil {
		t.Fatalf("wrap from stdin: %v", err)
	}
	if err := run(context.Background(), []string{"pxe", "ignition", "unwrap"}, &wrapped, &back, &errOut); err != nil || back.String() != config {
		t.Errorf("unwrap from stdin = %q, %v", back.String(), err)
	}
	if err := run(context.Background(), []string{"pxe", "ignition", "unwrap"}, bytes.NewReader([]byte("070701nothing")), &back, &errOut); err == nil {
		t.Errorf("unwrap of a broken archive succeeded")
	}
	if err := run(context.Background(), []string{"pxe", "network", "wrap"}, nil, &back, &errOut); err == nil {
		t.Errorf("pxe network wrap is not a command yet, but succeeded")
	}
}
