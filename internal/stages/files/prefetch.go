package files

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/flintboot/flint/config"
	"github.com/flintboot/flint/internal/rootfs"
)

// PrefetchBudget bounds what the files stage fetches ahead, all files
// together: the bytes of remote contents (decompressed) it receives
// while the shadow tools run, held in memory until their files' turn.
// A file that does not fit in what is left is fetched at its turn, as
// without a prefetch; what its prefetch had received stays counted, so
// the prefetch never receives more than this in all.
const PrefetchBudget = 4 << 20

// errPrefetchFull stops a prefetch that would go over the budget.
var errPrefetchFull = errors.New("over the files stage's prefetch budget")

// prefetcher fetches the remote contents of the config's files while the
// users and groups are made (Ignition's order puts them first, and
// useradd takes most of a small config's stage: coreos/ignition
// internal/exec/stages/files/files.go), through the stage's fetcher, so
// with the config's timeouts, retries, headers, proxy and CAs, and within
// the stage's fetch slots. Nothing is written to the root: each file
// still gets its temporary file, its checks and its rename at its turn
// (nodes), after the users exist, and an error of a prefetch is reported
// there, as the fetch's error would have been, in the config's order.
type prefetcher struct {
	slots   *fetchSlots
	fetcher Fetcher
	cancel  context.CancelFunc
	wg      sync.WaitGroup

	mu    sync.Mutex
	items map[*config.File]*prefetched
	left  int64 // of the budget
}

// prefetched is one file's contents fetched ahead.
type prefetched struct {
	f       *config.File
	started bool          // under prefetcher.mu
	done    chan struct{} // closed once data and err are set
	data    []byte
	err     error
}

// prefetchable says f's contents can be fetched ahead: they are remote,
// and so are none of its fragments (which are fetched after the
// contents, at the file's turn).
func prefetchable(f config.File) bool {
	if !isRemote(f.Contents) {
		return false
	}
	for _, a := range f.Append {
		if isRemote(a) {
			return false
		}
	}
	return true
}

// startPrefetch starts fetching the remote contents of the config's
// files, in the order the files are made, when there are users or
// groups to make first; nil when there is nothing to fetch ahead. A file
// an earlier run of the stage applied, or was about to rename, is left
// to nodes (appliedBefore).
func (s *stage) startPrefetch(ctx context.Context, budget int64) *prefetcher {
	pw := s.Config.Passwd
	if len(pw.Users) == 0 && len(pw.Groups) == 0 || budget <= 0 || s.Fetcher == nil {
		return nil
	}
	var list []*prefetched
	for _, e := range ordered(s.Config.Storage) {
		if e.kind != kindFile || !prefetchable(*e.file) {
			continue
		}
		if done, pending := s.Progress.Applied(e.what()); done || pending != (rootfs.FileID{}) {
			continue
		}
		list = append(list, &prefetched{f: e.file, done: make(chan struct{})})
	}
	if len(list) == 0 {
		return nil
	}
	ctx, cancel := context.WithCancel(ctx)
	p := &prefetcher{slots: s.slots, fetcher: s.Fetcher, cancel: cancel, items: map[*config.File]*prefetched{}, left: budget}
	for _, it := range list {
		p.items[it.f] = it
	}
	p.wg.Add(1)
	go p.run(ctx, list)
	return p
}

// run starts the prefetches in order, each once it has its fetch slots,
// until the budget is spent; those not started by their files' turn are
// left to nodes (take).
func (p *prefetcher) run(ctx context.Context, list []*prefetched) {
	defer p.wg.Done()
	for _, it := range list {
		if p.spent() {
			return
		}
		release, err := p.slots.acquire(ctx, *it.f)
		if err != nil {
			return
		}
		p.mu.Lock()
		if _, ok := p.items[it.f]; !ok {
			// Its turn came first: nodes fetches it.
			p.mu.Unlock()
			release()
			continue
		}
		it.started = true
		p.wg.Add(1)
		p.mu.Unlock()
		go func() {
			defer p.wg.Done()
			buf := &prefetchBuffer{p: p}
			err := p.fetcher.Fetch(ctx, it.f.Contents, buf)
			release()
			it.data, it.err = buf.b, err
			close(it.done)
		}()
	}
}

// spent says nothing is left of the budget.
func (p *prefetcher) spent() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.left <= 0
}

// reserve takes n bytes from the budget; false when fewer are left.
func (p *prefetcher) reserve(n int64) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if n > p.left {
		return false
	}
	p.left -= n
	return true
}

// take is called at f's turn: it returns f's prefetch, started (perhaps
// finished), or nil when there is none, or none started, which then
// never starts. Nil-safe.
func (p *prefetcher) take(f *config.File) *prefetched {
	if p == nil {
		return nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	it, ok := p.items[f]
	if !ok {
		return nil
	}
	delete(p.items, f)
	if !it.started {
		return nil
	}
	return it
}

// stop ends the prefetches still running and waits for them. Nil-safe.
func (p *prefetcher) stop() {
	if p == nil {
		return
	}
	p.cancel()
	p.wg.Wait()
}

// prefetchBuffer holds one prefetch's contents, within the budget. It is
// a resource.Rewinder, so a transfer broken midway starts over as it
// does into a temporary file.
type prefetchBuffer struct {
	p *prefetcher
	b []byte
}

func (b *prefetchBuffer) Write(d []byte) (int, error) {
	if !b.p.reserve(int64(len(d))) {
		return 0, errPrefetchFull
	}
	b.b = append(b.b, d...)
	return len(d), nil
}

// Offset is where the next write goes.
func (b *prefetchBuffer) Offset() (int64, error) { return int64(len(b.b)), nil }

// Rewind discards what was written from off on.
func (b *prefetchBuffer) Rewind(off int64) error {
	if off < 0 || off > int64(len(b.b)) {
		return fmt.Errorf("rewinding to %d of %d bytes", off, len(b.b))
	}
	b.b = b.b[:off]
	return nil
}

// fillPrefetched fills the temporary file from the contents pre fetched
// ahead, then the fragments as fill does; contents over the budget are
// fetched now, as fill fetches them. Its errors read as fill's.
func (j *fileJob) fillPrefetched(ctx context.Context, pre *prefetched, slots *fetchSlots, f Fetcher) {
	defer close(j.done)
	select {
	case <-pre.done:
	case <-ctx.Done():
		j.err = fmt.Errorf("file %s: contents: %w", j.f.Path, ctx.Err())
		return
	}
	if errors.Is(pre.err, errPrefetchFull) {
		release, err := slots.acquire(ctx, j.f)
		if err != nil {
			j.err = fmt.Errorf("file %s: contents: %w", j.f.Path, err)
			return
		}
		defer release()
		j.fillFrom(ctx, f)
		return
	}
	if pre.err != nil {
		j.err = fmt.Errorf("file %s: contents: %w", j.f.Path, pre.err)
		return
	}
	if len(pre.data) > 0 {
		if _, err := j.tmp.Write(pre.data); err != nil {
			j.err = fmt.Errorf("file %s: contents: %s: writing: %w", j.f.Path, config.DescribeURL(*j.f.Contents.Source), err)
			return
		}
	}
	j.fillAppends(ctx, f)
}
