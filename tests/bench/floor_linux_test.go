package bench

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// The floor's files: floorDirCount directories of floorPerDir, each
// floorSize bytes (the 5,000 new files of gen's config).
const floorDirCount, floorPerDir, floorSize = 50, 100, 400

// BenchmarkCreateFloor is what the filesystem under FLINT_BENCH_DIR costs
// any writer of the files stage's 5,000 new files, made as the stage makes
// a first boot's file (with no name, O_TMPFILE, then written and linked to
// its name), one directory after the other (gen's config, and so the
// stage, visits the directories in turn instead), three ways:
//
//   - seq: one thread, as the stage does;
//   - by-directory: two threads, each with half of the directories (no
//     hand-off per file: the most two cores can give);
//   - made-ahead: one thread makes the unnamed inodes 64 at a time, the
//     other writes and links them (the inode's allocation, which has no
//     visible effect, off the writer's path).
//
// It reports the creation's median wall time (create-s), the process's
// CPU time over it (cpu-s, user + system, both threads) and the syncfs
// after it (sync-s). Point FLINT_BENCH_DIR at a loop-mounted ext4, as
// tests/bench/README.md says, for the figures of /sysroot at boot.
func BenchmarkCreateFloor(b *testing.B) {
	for _, mode := range []string{"seq", "by-directory", "made-ahead"} {
		b.Run(mode, func(b *testing.B) {
			base := benchDir(b)
			var create, cpu, flush []time.Duration
			i := 0
			for b.Loop() {
				b.StopTimer()
				root := filepath.Join(base, fmt.Sprint("run", i))
				i++
				dirs := floorDirs(b, root)
				b.StartTimer()
				c, u, s := floorRun(b, mode, dirs)
				b.StopTimer()
				create, cpu, flush = append(create, c), append(cpu, u), append(flush, s)
				for _, fd := range dirs {
					unix.Close(fd)
				}
				os.RemoveAll(root)
				unix.Sync()
				b.StartTimer()
			}
			b.ReportMetric(median(create), "create-s")
			b.ReportMetric(median(cpu), "cpu-s")
			b.ReportMetric(median(flush), "sync-s")
		})
	}
}

// floorDirs makes the floorDirCount directories under root and opens them.
func floorDirs(b *testing.B, root string) []int {
	var fds []int
	for d := range floorDirCount {
		p := filepath.Join(root, "d"+strconv.Itoa(d))
		if err := os.MkdirAll(p, 0o755); err != nil {
			b.Fatal(err)
		}
		fd, err := unix.Open(p, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		if err != nil {
			b.Fatal(err)
		}
		fds = append(fds, fd)
	}
	return fds
}

// floorRun makes the files one way and says how long it took, the CPU it
// used and how long the syncfs after it took.
func floorRun(b *testing.B, mode string, dirs []int) (wall, cpu, flush time.Duration) {
	data := make([]byte, floorSize)
	var errMu sync.Mutex
	var firstErr error
	fail := func(err error) {
		errMu.Lock()
		if firstErr == nil {
			firstErr = err
		}
		errMu.Unlock()
	}
	unnamed := func(dir int) int {
		fd, err := unix.Openat(dir, ".", unix.O_RDWR|unix.O_TMPFILE|unix.O_CLOEXEC, 0o644)
		if err != nil {
			fail(err)
			return -1
		}
		return fd
	}
	link := func(fd, dir, n int) {
		if fd < 0 {
			return
		}
		defer unix.Close(fd)
		if _, err := unix.Write(fd, data); err != nil {
			fail(err)
			return
		}
		if err := unix.Linkat(unix.AT_FDCWD, "/proc/self/fd/"+strconv.Itoa(fd), dir, "f"+strconv.Itoa(n), unix.AT_SYMLINK_FOLLOW); err != nil {
			fail(err)
		}
	}
	var before, after unix.Rusage
	unix.Getrusage(unix.RUSAGE_SELF, &before)
	start := time.Now()
	switch mode {
	case "seq":
		for _, dir := range dirs {
			for n := range floorPerDir {
				link(unnamed(dir), dir, n)
			}
		}
	case "by-directory":
		var wg sync.WaitGroup
		for w := range 2 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for d := w; d < len(dirs); d += 2 {
					for n := range floorPerDir {
						link(unnamed(dirs[d]), dirs[d], n)
					}
				}
			}()
		}
		wg.Wait()
	case "made-ahead":
		batches := make(chan []int, 4)
		go func() {
			defer close(batches)
			var batch []int
			for _, dir := range dirs {
				for range floorPerDir {
					batch = append(batch, unnamed(dir))
					if len(batch) == 64 {
						batches <- batch
						batch = nil
					}
				}
			}
			batches <- batch
		}()
		k := 0
		for batch := range batches {
			for _, fd := range batch {
				link(fd, dirs[k/floorPerDir], k%floorPerDir)
				k++
			}
		}
	}
	wall = time.Since(start)
	unix.Getrusage(unix.RUSAGE_SELF, &after)
	if err := unix.Syncfs(dirs[0]); err != nil {
		b.Fatal(err)
	}
	flush = time.Since(start) - wall
	if firstErr != nil {
		b.Fatal(firstErr)
	}
	cpu = time.Duration(after.Utime.Nano() + after.Stime.Nano() - before.Utime.Nano() - before.Stime.Nano())
	return wall, cpu, flush
}
