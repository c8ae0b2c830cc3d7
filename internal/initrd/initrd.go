// Package initrd writes and reads initrd archives: newc cpio archives
// (the format the kernel unpacks into the initramfs,
// Documentation/driver-api/early-userspace/buffer-format.rst), compressed.
// flint pxe ignition wrap puts a config in one, at the path
// coreos-installer uses (config.ign at the root, src/live/embed.rs), so
// an initrd appended to a PXE boot carries the config for the live
// system; unwrap gets it back.
//
// Family: installer and live images (internal/README.md).
package initrd

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"

	"github.com/klauspost/compress/zstd"
	"github.com/ulikunitz/xz"
)

// ConfigPath is where the config is in the archive (coreos-installer,
// src/live/embed.rs, INITRD_IGNITION_PATH).
const ConfigPath = "config.ign"

// maxMember bounds a member read into memory: a config, a keyfile.
const maxMember = 64 << 20

// newcMagic starts every newc header ("new ASCII" format, cpio(5)).
const newcMagic = "070701"

// trailer is the name of the entry that ends an archive.
const trailer = "TRAILER!!!"

// Write writes members (path: contents) as an xz-compressed newc archive,
// as coreos-installer's Initrd::to_bytes does (src/io/initrd.rs): the
// parent directories first (mode 0755), files mode 0600 (a config can
// hold secrets), owner root, mtime 0, paths in order; the xz stream uses
// CRC32 checks, the only ones every kernel's xz decoder verifies.
func Write(w io.Writer, members map[string][]byte) error {
	zw, err := xz.WriterConfig{CheckSum: xz.CRC32}.NewWriter(w)
	if err != nil {
		return fmt.Errorf("initrd: %w", err)
	}
	paths := make([]string, 0, len(members))
	for p := range members {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	cw := &cpioWriter{w: zw}
	var cwd []string
	for _, p := range paths {
		if p == "" || strings.HasPrefix(p, "/") || strings.Contains(p, "..") {
			return fmt.Errorf("initrd: member path %q is not relative", p)
		}
		parent := strings.Split(p, "/")
		parent = parent[:len(parent)-1]
		i := 0
		for i < len(cwd) && i < len(parent) && cwd[i] == parent[i] {
			i++
		}
		cwd = cwd[:i]
		for _, c := range parent[i:] {
			cwd = append(cwd, c)
			cw.entry(strings.Join(cwd, "/"), 0o40755, nil)
		}
		cw.entry(p, 0o100600, members[p])
	}
	cw.entry(trailer, 0, nil)
	if cw.err != nil {
		return fmt.Errorf("initrd: %w", cw.err)
	}
	if err := zw.Close(); err != nil {
		return fmt.Errorf("initrd: %w", err)
	}
	return nil
}

// cpioWriter writes newc entries, keeping the first error.
type cpioWriter struct {
	w   io.Writer
	n   int64
	err error
	ino int
}

func (c *cpioWriter) write(b []byte) {
	if c.err != nil {
		return
	}
	n, err := c.w.Write(b)
	c.n += int64(n)
	c.err = err
}

func (c *cpioWriter) pad() {
	if r := c.n % 4; r != 0 {
		c.write(make([]byte, 4-r))
	}
}

func (c *cpioWriter) entry(name string, mode uint32, data []byte) {
	nlink := 1
	if mode&0o170000 == 0o40000 {
		nlink = 2
	}
	ino := 0
	if name != trailer {
		c.ino++
		ino = c.ino
	}
	// ino, mode, uid, gid, nlink, mtime, filesize, devmajor, devminor,
	// rdevmajor, rdevminor, namesize (with its NUL), check
	fields := []int64{int64(ino), int64(mode), 0, 0, int64(nlink), 0, int64(len(data)), 0, 0, 0, 0, int64(len(name) + 1), 0}
	var h strings.Builder
	h.WriteString(newcMagic)
	for _, f := range fields {
		fmt.Fprintf(&h, "%08X", f)
	}
	c.write([]byte(h.String()))
	c.write(append([]byte(name), 0))
	c.pad()
	c.write(data)
	c.pad()
}

// Read reads the regular files of an initrd: one or more newc archives,
// each raw or compressed with gzip, xz or zstd, one after another with
// zero padding between them, as the kernel unpacks them (an uncompressed
// early-microcode archive before a compressed main one is the common
// case) and as coreos-installer reads them (src/io/initrd.rs,
// from_reader_filtered); concatenated compressed streams are read too. A
// later copy of a path wins, as in the kernel. Members up to 64 MiB are
// kept.
func Read(r io.Reader) (map[string][]byte, error) { return ReadFiltered(r, nil) }

// ReadFiltered is Read keeping only the files whose path keep accepts (all
// for nil): the others are skipped, not held in memory.
func ReadFiltered(r io.Reader, keep func(string) bool) (map[string][]byte, error) {
	out := map[string][]byte{}
	if keep == nil {
		keep = func(string) bool { return true }
	}
	if err := readAny(bufio.NewReader(r), out, keep); err != nil {
		return nil, err
	}
	return out, nil
}

// readAny reads what follows in br to its end: raw archives, and
// compressed streams holding archives, with zero padding between them. A
// gzip member is read alone (its end is known), so that padding or another
// format may follow it; xz and zstd streams run to the end.
func readAny(br *bufio.Reader, out map[string][]byte, keep func(string) bool) error {
	for {
		if _, end, err := skipZeros(br); end || err != nil {
			return err
		}
		head, _ := br.Peek(6)
		switch {
		case bytes.HasPrefix(head, []byte{0x1f, 0x8b}):
			z, err := gzip.NewReader(br)
			if err != nil {
				return fmt.Errorf("initrd: gzip: %w", err)
			}
			z.Multistream(false)
			if err := readCpio(bufio.NewReader(z), out, keep); err != nil {
				return err
			}
			continue
		case bytes.HasPrefix(head, []byte{0xfd, '7', 'z', 'X', 'Z', 0}):
			z, err := xz.NewReader(br)
			if err != nil {
				return fmt.Errorf("initrd: xz: %w", err)
			}
			return readCpio(bufio.NewReader(z), out, keep)
		case bytes.HasPrefix(head, []byte{0x28, 0xb5, 0x2f, 0xfd}):
			z, err := zstd.NewReader(br, zstd.WithDecoderConcurrency(1))
			if err != nil {
				return fmt.Errorf("initrd: zstd: %w", err)
			}
			defer z.Close()
			return readCpio(bufio.NewReader(z), out, keep)
		case bytes.HasPrefix(head, []byte(newcMagic)) || bytes.HasPrefix(head, []byte("070702")):
			return readCpio(br, out, keep)
		default:
			return errors.New("initrd: neither a newc cpio archive nor gzip, xz or zstd")
		}
	}
}

// skipZeros reads the zero bytes at br's front (the padding between
// archives and streams): how many, and whether br ended.
func skipZeros(br *bufio.Reader) (n int64, end bool, err error) {
	for {
		b, err := br.Peek(1)
		if errors.Is(err, io.EOF) {
			return n, true, nil
		}
		if err != nil {
			return n, false, fmt.Errorf("initrd: %w", err)
		}
		if b[0] != 0 {
			return n, false, nil
		}
		br.Discard(1)
		n++
	}
}

// readCpio reads archives from r into out until its end; a compressed
// stream after an archive's padding is read by readAny.
func readCpio(r *bufio.Reader, out map[string][]byte, keep func(string) bool) error {
	var off int64
	read := func(b []byte) error {
		n, err := io.ReadFull(r, b)
		off += int64(n)
		return err
	}
	skipPad := func() error {
		if rem := off % 4; rem != 0 {
			return read(make([]byte, 4-rem))
		}
		return nil
	}
	for {
		// Between archives: zero padding, or the end.
		n, end, err := skipZeros(r)
		off += n
		if end || err != nil {
			return err
		}
		if head, _ := r.Peek(6); !bytes.HasPrefix(head, []byte(newcMagic)) && !bytes.HasPrefix(head, []byte("070702")) {
			return readAny(r, out, keep)
		}
		for {
			hdr := make([]byte, 110)
			if err := read(hdr); err != nil {
				return fmt.Errorf("initrd: header at byte %d: %w", off, err)
			}
			if string(hdr[:6]) != newcMagic && string(hdr[:6]) != "070702" {
				return fmt.Errorf("initrd: no newc header at byte %d", off-110)
			}
			field := func(i int) (int64, error) {
				return strconv.ParseInt(string(hdr[6+8*i:14+8*i]), 16, 64)
			}
			mode, err1 := field(1)
			size, err2 := field(6)
			nameSize, err3 := field(11)
			if err := errors.Join(err1, err2, err3); err != nil || nameSize < 1 || nameSize > 4096 || size < 0 {
				return fmt.Errorf("initrd: bad header at byte %d", off-110)
			}
			name := make([]byte, nameSize)
			if err := read(name); err != nil {
				return fmt.Errorf("initrd: name at byte %d: %w", off, err)
			}
			if err := skipPad(); err != nil {
				return fmt.Errorf("initrd: %w", err)
			}
			n := strings.TrimSuffix(string(name), "\x00")
			if n == trailer {
				break
			}
			if mode&0o170000 == 0o100000 && size <= maxMember && keep(strings.TrimPrefix(n, "./")) {
				data := make([]byte, size)
				if err := read(data); err != nil {
					return fmt.Errorf("initrd: %s: %w", n, err)
				}
				out[strings.TrimPrefix(n, "./")] = data
			} else {
				if _, err := r.Discard(int(size)); err != nil {
					return fmt.Errorf("initrd: %s: %w", n, err)
				}
				off += size
			}
			if err := skipPad(); err != nil {
				return fmt.Errorf("initrd: %w", err)
			}
		}
	}
}
