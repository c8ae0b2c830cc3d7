package disks

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"
)

// BenchmarkStage runs the whole stage on 4 loop disks, 12 partitions and
// 12 filesystems (3 each of ext4, xfs, btrfs and vfat), with mkfs in
// parallel and forced serial; then the filesystem phase alone, both ways
// (after a whole run: it needs the partitions), and the partitioning
// phase alone.
// Every run wipes the tables and the filesystems, so each one does all
// the work. Besides ns/op it reports the median run in milliseconds. As
// root:
//
//	go test -run '^$' -bench Stage -benchtime 7x ./internal/stages/disks
func BenchmarkStage(b *testing.B) {
	needRoot(b, "mkfs.ext4", "mkfs.xfs", "mkfs.btrfs", "mkfs.fat")
	// xfs needs 300 MiB, btrfs about 114 MiB.
	layouts := [][]string{{"xfs", "btrfs", "ext4"}, {"xfs", "btrfs", "vfat"}, {"xfs", "ext4", "vfat"}, {"btrfs", "ext4", "vfat"}}
	sizes := map[string]int{"xfs": 300, "btrfs": 128, "ext4": 64, "vfat": 64}
	var disks, fss []string
	for _, layout := range layouts {
		dev := loopDisk(b, 512)
		var parts []string
		for i, format := range layout {
			n := i + 1
			parts = append(parts, fmt.Sprintf(`{"number":%d,"label":"%s%d","sizeMiB":%d}`, n, format, n, sizes[format]))
			fss = append(fss, fmt.Sprintf(`{"device":"%sp%d","format":%q,"label":"%s%d","wipeFilesystem":true}`, dev, n, format, format, n))
		}
		disks = append(disks, fmt.Sprintf(`{"device":%q,"wipeTable":true,"partitions":[%s]}`, dev, strings.Join(parts, ",")))
	}
	cfg := parseConfig(b, fmt.Sprintf(`{"ignition":{"version":"3.4.0"},"storage":{"disks":[%s],"filesystems":[%s]}}`,
		strings.Join(disks, ","), strings.Join(fss, ",")))
	// The same filesystems without the disks: the filesystem phase
	// alone, which sgdisk's sleeps do not drown.
	fsOnly := parseConfig(b, fmt.Sprintf(`{"ignition":{"version":"3.4.0"},"storage":{"filesystems":[%s]}}`, strings.Join(fss, ",")))
	// The disks without the filesystems: the partitioning phase alone
	// (read, plan, write four tables, tell the kernel, check its view).
	partsOnly := parseConfig(b, fmt.Sprintf(`{"ignition":{"version":"3.4.0"},"storage":{"disks":[%s]}}`, strings.Join(disks, ",")))

	for _, mode := range []struct {
		name   string
		serial bool
	}{{"parallel", false}, {"serial", true}, {"filesystems-only/parallel", false}, {"filesystems-only/serial", true}, {"partitions-only", false}} {
		cfg := cfg
		switch {
		case strings.HasPrefix(mode.name, "filesystems-only/"):
			cfg = fsOnly
		case mode.name == "partitions-only":
			cfg = partsOnly
		}
		b.Run(mode.name, func(b *testing.B) {
			d, _ := realDeps(b, cfg, slog.New(slog.DiscardHandler))
			d.SerialMkfs = mode.serial
			var runs []time.Duration
			for b.Loop() {
				start := time.Now()
				if err := Run(context.Background(), d); err != nil {
					b.Fatalf("Run() = %v", err)
				}
				runs = append(runs, time.Since(start))
			}
			slices.Sort(runs)
			b.ReportMetric(float64(runs[len(runs)/2].Microseconds())/1000, "median-ms")
		})
	}
}
