package unitfile

import "errors"

// ErrBadName means a unit or drop-in name would leave its directory (a
// slash, "." or ".."). Validation refuses such names, but the later stages
// read the cached config without validating it again.
var ErrBadName = errors.New("not a valid unit or drop-in name")
