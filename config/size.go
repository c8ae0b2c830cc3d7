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

// ParseSize reads a size in bytes: a whole number with an optional suffix
// K, M or G (KiB, MiB or GiB also do; all mean powers of 1024).
func ParseSize(s string) (int64, error) {
	num := strings.TrimSuffix(s, "iB")
	shift := 0
	if num != "" {
		switch num[len(num)-1] {
		case 'K', 'k':
			shift = 10
		case 'M', 'm':
			shift = 20
		case 'G', 'g':
			shift = 30
		}
	}
	if shift > 0 {
		num = num[:len(num)-1]
	} else if num != s {
		num = "" // "iB" without K, M or G
	}
	n, err := strconv.ParseInt(num, 10, 64)
	if err != nil || n <= 0 || n > (1<<62)>>shift {
		return 0, fmt.Errorf("size %q: %w", s, ErrBadSize)
	}
	return n << shift, nil
}
