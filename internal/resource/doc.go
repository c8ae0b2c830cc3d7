// Package resource fetches what a config points at: configs to merge or
// replace, file contents, certificate authorities, and the platform
// providers' metadata.
//
// A Fetcher knows the URL schemes of the config spec (http, https, tftp,
// data, s3, arn, gs), retries network errors and 5xx answers with capped
// exponential backoff until timeouts.httpTotal runs out, and streams
// contents through gzip decompression and the sha256/sha512 check the
// config asks for, so a file of any size passes through a fixed amount of
// memory.
//
// Deliberate differences from Ignition's fetcher (coreos/ignition
// internal/resource/url.go and http.go):
//
//   - On a redirect to another host (or from https to http) the headers the
//     config or the provider asked for are dropped, so tokens do not leak,
//     but flint's own Accept, Accept-Encoding and User-Agent are kept. The
//     reference drops every header, its own included.
//   - Retries wait a random time between 200 ms and 5 s, up to three
//     times the last wait (decorrelated jitter), not a doubling that
//     makes a fleet which failed together retry together; a 503 or 429
//     with Retry-After (seconds or an HTTP-date) waits what the server
//     said and up to half as long again at random, no longer than
//     httpTotal leaves (5 minutes at most without
//     one), and a 429 with Retry-After is retried where the reference
//     gives up.
//   - Certificate errors fail at once instead of being retried until
//     httpTotal: waiting does not make a certificate valid.
//   - A transfer that breaks after the server answered (a connection
//     reset, a body shorter than its Content-Length, a body that sends
//     nothing for Options.IdleTimeout, 30 s by default) is started over
//     from the beginning when the caller's writer can take the bytes back
//     (a Rewinder, as the files stage's temporary files are; a config, a CA
//     bundle, a metadata answer), at most 3 attempts in all: a transfer
//     that stalls for good ends in about 90 s even without httpTotal.
//     Without httpTotal a server that takes the connection and sends no
//     answer in time gets 3 attempts too. The reference waits for
//     httpTotal, forever without one.
//   - URLs in errors and logs carry no credentials and no query, a
//     redirect's unparseable Location header included (net/http quotes it
//     whole).
//   - s3 and arn objects are signed with SigV4 written here (sigv4.go), not
//     with the AWS SDK, which would bring two modules into the initramfs.
//     Like the SDK, a signed request that S3 refuses while its Date is
//     more than 5 minutes from the local clock (a boot before NTP) is
//     signed again once with S3's time.
//
// Open streams an http(s) body to a reader that takes it at its own pace
// (flint install's OS image), with the same retries, bounded by
// Options.MaxAttempts when the caller has a retry count of its own; the
// idle timeout runs only while a read waits for the server. Decompress
// tells a compressed stream's format by its magic number, from a registry
// (Formats: gzip, xz, zstd) a caller may change a decoder in.
//
// Every cloud endpoint the fetcher talks to (EC2 instance metadata, S3, GCE
// metadata, Google Cloud Storage) and the TFTP port can be changed through
// Options, so tests run against servers on 127.0.0.1.
package resource
