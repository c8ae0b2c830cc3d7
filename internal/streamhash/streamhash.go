// Package streamhash copies a stream while checking it piece by piece
// against a hash file, as rdcore stream-hash does for the live PXE root
// filesystem fetched over the network (coreos/coreos-installer
// src/bin/rdcore/stream_hash.rs): no piece reaches the output before its
// hash matched, so a truncated or tampered download is never unpacked.
//
// The hash file is a header line "stream-hash sha256 CHUNKSIZE", then one
// hex SHA-256 per chunk; the last chunk may be short. The errors are
// worded as rdcore words them, for the scripts and people that read them.
//
// Family: installer and live images (internal/README.md).
package streamhash

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
)

// MaxChunkSize is the largest chunk a hash file may name (64 MiB): each
// chunk is held in memory while it is checked.
const MaxChunkSize = 64 << 20

var header = regexp.MustCompile(`^stream-hash ([a-z0-9]+) ([0-9]+)\n$`)

// Copy copies in to out, checking each chunk against the hash file read
// from hashes before writing it. It fails when in is shorter or longer
// than the hashes cover.
func Copy(out io.Writer, in io.Reader, hashes io.Reader) error {
	r := bufio.NewReader(hashes)
	line, err := r.ReadString('\n')
	if err != nil && !errors.Is(err, io.EOF) {
		return fmt.Errorf("reading hash file: %w", err)
	}
	if line == "" {
		return errors.New("hash file is empty")
	}
	m := header.FindStringSubmatch(line)
	if m == nil {
		return errors.New("couldn't parse hash file header")
	}
	if m[1] != "sha256" {
		return fmt.Errorf("unknown digest algorithm %s", m[1])
	}
	size, err := strconv.ParseUint(m[2], 10, 63)
	if err != nil {
		return errors.New("couldn't parse chunk size")
	}
	switch {
	case size == 0:
		return errors.New("chunk size cannot be zero")
	case size > MaxChunkSize:
		return fmt.Errorf("chunk size %d is greater than maximum %d", size, MaxChunkSize)
	}
	buf := make([]byte, size)
	var offset int64
	for {
		line, err := r.ReadString('\n')
		if err != nil && !errors.Is(err, io.EOF) {
			return fmt.Errorf("couldn't read hash from hash file: %w", err)
		}
		if line == "" && errors.Is(err, io.EOF) {
			break
		}
		line = strings.TrimSuffix(line, "\n")
		want, derr := hex.DecodeString(line)
		if derr != nil {
			return fmt.Errorf("couldn't decode hash: %q", line)
		}
		n, rerr := io.ReadFull(in, buf)
		if rerr != nil && !errors.Is(rerr, io.ErrUnexpectedEOF) && !errors.Is(rerr, io.EOF) {
			return fmt.Errorf("reading input: %w", rerr)
		}
		if n == 0 {
			return fmt.Errorf("premature end of input data at offset %d", offset)
		}
		got := sha256.Sum256(buf[:n])
		if !bytes.Equal(got[:], want) {
			return fmt.Errorf("hash mismatch at offset %d; expected %s, found %s", offset, hex.EncodeToString(want), hex.EncodeToString(got[:]))
		}
		if _, err := out.Write(buf[:n]); err != nil {
			return fmt.Errorf("writing output: %w", err)
		}
		offset += int64(n)
		if errors.Is(err, io.EOF) {
			break
		}
	}
	var one [1]byte
	if n, err := io.ReadFull(in, one[:]); n != 0 {
		return fmt.Errorf("found extra input data at offset %d", offset)
	} else if err != nil && !errors.Is(err, io.EOF) {
		return fmt.Errorf("draining input: %w", err)
	}
	return nil
}
