package cloudconfig

import "errors"

// ErrUntranslatable means the user-data asks for something the translated
// config does not do: the report's errors say what, and where.
var ErrUntranslatable = errors.New("user-data has keys that were not translated")

// ErrOutputInvalid means the translated config did not validate: a bug in
// the translator, reported with the config package's report.
var ErrOutputInvalid = errors.New("the translated config does not validate")

// ErrNotUserData means the input is no user-data cloud-init reads as
// cloud-config: nothing to translate.
var ErrNotUserData = errors.New("not cloud-config user-data")
