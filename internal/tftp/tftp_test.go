package tftp_test

import (
	"bytes"
	"context"
	"errors"
	"testing"
	"time"

	"github.com/flintboot/flint/internal/tftp"
	"github.com/flintboot/flint/internal/tftp/tftptest"
)

// pattern returns n bytes that differ from block to block, so a block
// written twice or skipped shows.
func pattern(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i*7 + i/512)
	}
	return b
}

func TestGet(t *testing.T) {
	files := map[string][]byte{
		"empty":          {},
		"small.ign":      []byte(`{"ignition":{"version":"3.6.0"}}`),
		"exact512":       pattern(512),
		"multi":          pattern(512*7 + 100),
		"exact-multiple": pattern(1024 * 4),
		"dir/nested.ign": []byte("nested"),
	}
	tests := []struct {
		name        string
		file        string
		blockSize   int // client's request
		serverMax   int
		noOptions   bool
		refuse      bool
		wantBlksize string // option sent, "" for none
	}{
		{name: "small, default block size", file: "small.ign", wantBlksize: "1448"},
		{name: "empty file", file: "empty", wantBlksize: "1448"},
		{name: "multi-block negotiated", file: "multi", blockSize: 1024, wantBlksize: "1024"},
		{name: "server lowers block size", file: "multi", blockSize: 4096, serverMax: 600, wantBlksize: "4096"},
		{name: "size a multiple of the block size", file: "exact-multiple", blockSize: 1024, wantBlksize: "1024"},
		{name: "plain server ignores options", file: "multi", noOptions: true, wantBlksize: "1448"},
		{name: "plain client", file: "exact512", blockSize: -1},
		{name: "server refuses options, client retries without", file: "multi", refuse: true, wantBlksize: "1448"},
		{name: "nested path", file: "dir/nested.ign", wantBlksize: "1448"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := tftptest.NewUnstartedServer(files)
			srv.NoOptions, srv.RefuseOptions, srv.MaxBlockSize = tt.noOptions, tt.refuse, tt.serverMax
			srv.Start()
			defer srv.Close()
			c := &tftp.Client{BlockSize: tt.blockSize, Timeout: time.Second}
			var buf bytes.Buffer
			n, err := c.Get(context.Background(), srv.Addr(), tt.file, &buf)
			if err != nil {
				t.Fatalf("Get(%s) = %v", tt.file, err)
			}
			if want := files[tt.file]; !bytes.Equal(buf.Bytes(), want) || n != int64(len(want)) {
				t.Errorf("Get(%s) = %d bytes, want %d (content equal: %v)", tt.file, n, len(want), bytes.Equal(buf.Bytes(), want))
			}
			reqs := srv.Requests()
			if len(reqs) == 0 {
				t.Fatal("server saw no request")
			}
			if got := reqs[0].Options["blksize"]; got != tt.wantBlksize {
				t.Errorf("first request blksize = %q, want %q", got, tt.wantBlksize)
			}
			if tt.wantBlksize != "" && reqs[0].Options["tsize"] != "0" {
				t.Errorf("first request tsize = %q, want 0", reqs[0].Options["tsize"])
			}
			if reqs[0].Mode != "octet" {
				t.Errorf("mode = %q, want octet", reqs[0].Mode)
			}
			if tt.refuse && (len(reqs) != 2 || len(reqs[1].Options) != 0) {
				t.Errorf("after ERROR 8 requests = %+v, want a second request without options", reqs)
			}
		})
	}
}

func TestGetLosesPackets(t *testing.T) {
	data := pattern(512 * 5)
	srv := tftptest.NewUnstartedServer(map[string][]byte{"f": data})
	srv.Timeout = 20 * time.Millisecond
	srv.Lose = func(block uint16, try int) bool { return try == 0 && (block == 2 || block == 5) }
	srv.DropRequests = 1 // the client must send its request again
	srv.Start()
	defer srv.Close()
	c := &tftp.Client{BlockSize: 512, Timeout: 50 * time.Millisecond}
	var buf bytes.Buffer
	if _, err := c.Get(context.Background(), srv.Addr(), "f", &buf); err != nil {
		t.Fatalf("Get = %v", err)
	}
	if !bytes.Equal(buf.Bytes(), data) {
		t.Errorf("Get with lost packets: %d bytes, want %d, same content: %v", buf.Len(), len(data), bytes.Equal(buf.Bytes(), data))
	}
	if n := len(srv.Requests()); n != 2 {
		t.Errorf("server saw %d requests, want 2 (one dropped, one sent again)", n)
	}
}

// TestGetBlockWrap reads more than 65535 blocks, so block numbers wrap.
func TestGetBlockWrap(t *testing.T) {
	if testing.Short() {
		t.Skip("transfers 65537 packets")
	}
	data := pattern(8*65536 + 3)
	srv := tftptest.NewServer(map[string][]byte{"big": data})
	defer srv.Close()
	c := &tftp.Client{BlockSize: 8, Timeout: time.Second}
	var buf bytes.Buffer
	if _, err := c.Get(context.Background(), srv.Addr(), "big", &buf); err != nil {
		t.Fatalf("Get = %v", err)
	}
	if !bytes.Equal(buf.Bytes(), data) {
		t.Errorf("Get across the block number wrap: %d bytes, want %d", buf.Len(), len(data))
	}
}

func TestGetErrors(t *testing.T) {
	srv := tftptest.NewServer(map[string][]byte{"f": []byte("x")})
	defer srv.Close()

	t.Run("file not found", func(t *testing.T) {
		_, err := (&tftp.Client{}).Get(context.Background(), srv.Addr(), "missing", &bytes.Buffer{})
		var te *tftp.Error
		if !errors.As(err, &te) || te.Code != tftp.CodeFileNotFound {
			t.Errorf("Get(missing) = %v, want a tftp.Error with code %d", err, tftp.CodeFileNotFound)
		}
	})
	t.Run("no server", func(t *testing.T) {
		// A bound socket that never answers.
		quiet := tftptest.NewServer(nil)
		addr := quiet.Addr()
		quiet.Close()
		start := time.Now()
		_, err := (&tftp.Client{Timeout: 20 * time.Millisecond, Retries: 2}).Get(context.Background(), addr, "f", &bytes.Buffer{})
		if err == nil {
			t.Fatal("Get from a closed port succeeded")
		}
		if time.Since(start) > 5*time.Second {
			t.Errorf("Get took %v to give up", time.Since(start))
		}
	})
	t.Run("context cancelled", func(t *testing.T) {
		quiet := tftptest.NewServer(nil)
		addr := quiet.Addr()
		quiet.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
		defer cancel()
		_, err := (&tftp.Client{Timeout: time.Hour}).Get(ctx, addr, "f", &bytes.Buffer{})
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("Get past the deadline = %v, want context.DeadlineExceeded", err)
		}
	})
	t.Run("bad block size", func(t *testing.T) {
		if _, err := (&tftp.Client{BlockSize: 4}).Get(context.Background(), srv.Addr(), "f", &bytes.Buffer{}); err == nil {
			t.Error("Get with block size 4 succeeded")
		}
	})
}
