// Package kickstart translates Anaconda kickstart files into flint configs
// (Ignition spec 3.x), for `flint kickstart`.
//
// Kickstart answers an installer's questions; a config describes what to do
// to an already-written image on its first boot. Most commands map onto a
// config field or a file the config writes (docs/kickstart.md has the table);
// the rest are reported, with the kickstart file and line they come from, as
// approximate (a warning) or not translatable (an error), each with what to
// do instead. Plaintext passwords are hashed with SHA-512 crypt when
// translating and never appear in a report. The output only uses fields of
// the spec version asked for (config.FieldSince) and is checked with the
// config package before it is returned, so it always validates.
//
// Family: translators (internal/README.md).
package kickstart
