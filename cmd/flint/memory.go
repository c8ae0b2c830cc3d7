package main

import (
	"runtime/debug"

	"github.com/flintboot/flint/config"
)

// memoryBudget is the most memory flint may take to read configs of size
// bytes in all: four times their size plus 16 MiB (issue 19). Reading one
// keeps its text and the model built from it; a config of hundreds of
// thousands of small files is the worst case, at about 3.7 times its size.
func memoryBudget(size int64) int64 {
	return 4*size + 16<<20
}

// heapReserve is the part of the budget that the runtime's memory limit
// does not count: the binary's code and data, about 7 MiB resident.
const heapReserve = 8 << 20

// limitMemory sets the Go runtime's soft memory limit to the budget for
// configs of size bytes (less heapReserve), so that the collector works
// harder rather than let garbage take the process over it, unless
// GOMEMLIMIT is set. It returns a function that puts the previous limit
// back.
func limitMemory(getenv func(string) string, size int64) (restore func()) {
	if getenv("GOMEMLIMIT") != "" {
		return func() {}
	}
	prev := debug.SetMemoryLimit(memoryBudget(min(size, config.MaxSize)) - heapReserve)
	return func() { debug.SetMemoryLimit(prev) }
}

// translateMemoryLimit is the soft memory limit of flint translate, which
// collects at stageGCPercent as the stages do: a translation is a short
// process whose heap mostly grows (the YAML tree, the model, the encoded
// contents), so collecting at twice the live heap spends CPU to free
// little. The limit makes a large config collect rather than take more,
// keeping the 2,000-file benchmark config under issue 16's 64 MiB.
const translateMemoryLimit = 48 << 20

// tuneTranslateGC sets translate's collector targets, except where GOGC
// or GOMEMLIMIT (getenv) say otherwise. It returns a function that puts
// the previous settings back.
func tuneTranslateGC(getenv func(string) string) (restore func()) {
	if getenv("GOGC") != "" || getenv("GOMEMLIMIT") != "" {
		return func() {}
	}
	prevLimit := debug.SetMemoryLimit(translateMemoryLimit)
	prevPercent := debug.SetGCPercent(stageGCPercent)
	return func() {
		debug.SetGCPercent(prevPercent)
		debug.SetMemoryLimit(prevLimit)
	}
}
