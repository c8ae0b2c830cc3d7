package config

// FieldSince returns the spec version that introduced the field at path, a
// JSON path without list indices or "$" ("storage.luks",
// "storage.filesystems.mountOptions"), and false for a field that 3.0.0
// already had (or that does not exist). Translators that emit configs for an
// older version (flint kickstart) use it to leave out what that version
// lacks, from the same table Parse applies.
func FieldSince(path string) (Version, bool) {
	v, ok := fieldSince[path]
	return v, ok
}
