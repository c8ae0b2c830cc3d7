package oplog

import (
	"io"
	"log/slog"
	"testing"
)

// BenchmarkQuickFinish is one file's line in the files stage: an
// operation started with Quick and finished with its mode and owner.
func BenchmarkQuickFinish(b *testing.B) {
	log := slog.New(NewTextHandler(io.Discard, nil)).With(StageKey, "files")
	b.ReportAllocs()
	for b.Loop() {
		Quick(log, "files", "writing file /srv/bench/d00/f0000.conf").Finish("mode", "0644", "uid", 0, "gid", 0)
	}
}
