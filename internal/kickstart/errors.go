package kickstart

import "errors"

// ErrUntranslatable means the kickstart asks for something the translated
// config does not do: the report's errors say what, and where.
var ErrUntranslatable = errors.New("kickstart has commands that were not translated")

// ErrOutputInvalid means the translated config did not validate: a bug in
// the translator, reported with the config package's report.
var ErrOutputInvalid = errors.New("the translated config does not validate")

// errUnterminatedQuote is a command line whose quote never closes.
var errUnterminatedQuote = errors.New("unterminated quote")
