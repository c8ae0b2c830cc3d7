package config

import (
	"fmt"
	"strconv"
	"strings"
)

// DefaultMaxSize is the largest config flint reads unless told otherwise
// (`flint validate -max-size`, the kernel argument flint.config.max_size):
// 64 MiB. The reference has no limit; real configs are kilobytes to a few
// megabytes, and even one that embeds its files as data URLs rarely
// passes ten. Parsing one costs at most about four times its size, so a
// config at the limit fits in the memory of any machine flint provisions.
const DefaultMaxSize = 64 << 20

// CheckSize returns an error wrapping ErrTooLarge when a config of size
// bytes is over limit, naming both; what names the config.
func CheckSize(what string, size, limit int64) error {
	if size <= limit {
		return nil
	}
	return fmt.Errorf("%s: %w: %d bytes, over the limit of %d bytes", what, ErrTooLarge, size, limit)
}

// MaxSize is the largest size ParseSize accepts, 1 TiB: more than any
// machine could parse, and small enough that four times it is an int64.
const MaxSize = 1 << 40

// ParseSize reads a size in bytes: a whole number with an optional suffix
// K, M or G (or KiB, MiB, GiB), all powers of 1024, at most MaxSize.
func ParseSize(s string) (int64, error) {
	num, shift := strings.TrimSuffix(s, "iB"), 0
	if i := len(num) - 1; i > 0 {
		if u := strings.IndexByte("KMGkmg", num[i]); u >= 0 {
			num, shift = num[:i], 10*(u%3+1)
		}
	}
	n, err := strconv.ParseInt(num, 10, 64)
	if err != nil || n <= 0 || n > MaxSize>>shift || shift == 0 && num != s {
		return 0, fmt.Errorf("size %q: %w", s, ErrBadSize)
	}
	return n << shift, nil
}
