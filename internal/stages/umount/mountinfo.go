package umount

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// DefaultMountInfo is the kernel's mount table of flint's mount namespace
// (proc(5)).
const DefaultMountInfo = "/proc/self/mountinfo"

// mountpoints reads the mount points of a mountinfo file, unescaped (the
// kernel writes space, tab, newline and backslash as \ooo).
func mountpoints(path string) (map[string]bool, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("reading the mount table: %w", err)
	}
	defer f.Close()
	mps := map[string]bool{}
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		// 36 35 98:0 /mnt1 /mnt2 rw,noatime master:1 - ext3 /dev/root rw
		fields := strings.Fields(sc.Text())
		if len(fields) < 5 {
			continue
		}
		mps[unescape(fields[4])] = true
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("reading the mount table %s: %w", path, err)
	}
	return mps, nil
}

func unescape(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+4 <= len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}
