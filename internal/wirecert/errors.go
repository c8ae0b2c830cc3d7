package wirecert

import "errors"

var (
	// ErrFormat means a structure is not what the format says (bad DER,
	// a missing field, a wrong OID where one is fixed).
	ErrFormat = errors.New("malformed data")
	// ErrUnsupported means a valid structure uses an algorithm flint does
	// not implement (an EnvelopedData with AES content, a PFX with PBES2).
	ErrUnsupported = errors.New("unsupported algorithm")
	// ErrDecrypt means decryption failed: the data was not encrypted to
	// this key, or the padding is wrong.
	ErrDecrypt = errors.New("decryption failed")
)
