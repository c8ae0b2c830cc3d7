package unitfile

import "errors"

// ErrBadName means a unit or drop-in name is not one systemd takes
// (config.CheckUnitName, config.CheckDropinName) or would leave its
// directory (a slash, ".."). Validation refuses such names, but the later
// stages read the cached config without validating it again.
var ErrBadName = errors.New("not a valid unit or drop-in name")
