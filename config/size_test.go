package config

import (
	"errors"
	"strings"
	"testing"
)

func TestParseSize(t *testing.T) {
	tests := []struct {
		in   string
		want int64
	}{
		{"1", 1},
		{"1500000", 1500000},
		{"64K", 64 << 10},
		{"64k", 64 << 10},
		{"64KiB", 64 << 10},
		{"128M", 128 << 20},
		{"128MiB", 128 << 20},
		{"2G", 2 << 30},
		{"2GiB", 2 << 30},
		{"1024G", MaxSize},
		{"1099511627776", MaxSize},
	}
	for _, tt := range tests {
		if got, err := ParseSize(tt.in); err != nil || got != tt.want {
			t.Errorf("ParseSize(%q) = %d, %v, want %d", tt.in, got, err, tt.want)
		}
	}
	for _, in := range []string{"", "0", "-1", "M", "iB", "12iB", "1.5M", "64 M", "64MB", "1T", "1025G", "1099511627777", "9999999999G", "0x10"} {
		if got, err := ParseSize(in); !errors.Is(err, ErrBadSize) {
			t.Errorf("ParseSize(%q) = %d, %v, want ErrBadSize", in, got, err)
		}
	}
}

func TestCheckSize(t *testing.T) {
	if err := CheckSize("user config", 100, 100); err != nil {
		t.Errorf("CheckSize(100, limit 100) = %v, want nil", err)
	}
	err := CheckSize("user config", DefaultMaxSize+1, DefaultMaxSize)
	if !errors.Is(err, ErrTooLarge) {
		t.Fatalf("CheckSize(over the limit) = %v, want ErrTooLarge", err)
	}
	for _, want := range []string{"user config", "67108865 bytes", "limit of 67108864 bytes"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("CheckSize(over the limit) = %q, want it to name %q", err, want)
		}
	}
}
