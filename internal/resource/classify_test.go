package resource

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"syscall"
	"testing"
)

func TestRetryable(t *testing.T) {
	opErr := func(err error) error {
		return &net.OpError{Op: "read", Net: "tcp", Err: &os.SyscallError{Syscall: "read", Err: err}}
	}
	urlErr := func(err error) error { return &url.Error{Op: "Get", URL: "http://x", Err: err} }
	tests := []struct {
		name string
		err  error
		want bool
	}{
		{"refused", urlErr(&net.OpError{Op: "dial", Err: &os.SyscallError{Syscall: "connect", Err: syscall.ECONNREFUSED}}), true},
		{"reset", opErr(syscall.ECONNRESET), true},
		{"unexpected EOF", fmt.Errorf("reading: %w", io.ErrUnexpectedEOF), true},
		{"EOF before the answer", urlErr(io.EOF), true},
		{"DNS", urlErr(&net.OpError{Op: "dial", Err: &net.DNSError{Err: "no such host", Name: "x"}}), true},
		{"network unreachable", urlErr(syscall.ENETUNREACH), true},
		{"timeout", urlErr(os.ErrDeadlineExceeded), true},
		{"canceled", urlErr(context.Canceled), false},
		{"local port in use", urlErr(&net.OpError{Op: "dial", Err: &os.SyscallError{Syscall: "bind", Err: syscall.EADDRINUSE}}), false},
		{"privileged local port", urlErr(&net.OpError{Op: "dial", Err: &os.SyscallError{Syscall: "bind", Err: syscall.EACCES}}), false},
		{"unknown authority", urlErr(x509.UnknownAuthorityError{}), false},
		{"hostname mismatch", urlErr(x509.HostnameError{Host: "x"}), false},
		{"TLS alert from the server", urlErr(&net.OpError{Op: "remote error", Err: tls.AlertError(70)}), false},
		{"other", urlErr(errors.New("stopped after 10 redirects")), false},
	}
	for _, tt := range tests {
		if got := retryable(tt.err); got != tt.want {
			t.Errorf("retryable(%s: %v) = %v, want %v", tt.name, tt.err, got, tt.want)
		}
	}
}
