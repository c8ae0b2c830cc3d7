//go:build !linux

package engine

// stampMountFlags has no flags off Linux, where sys.Mounter fails anyway.
func stampMountFlags(bool) uintptr { return 0 }
