package config

import (
	"fmt"
	"reflect"
	"strconv"
)

// Merge returns child merged over parent. The spec merges this way a config
// named in ignition.config.merge over the config that names it, and a user
// config over the base configs the distro ships.
//
// The rules, applied from the root down:
//
//   - A struct the child leaves empty keeps the parent's, one the parent
//     leaves empty takes the child's, and otherwise they merge field by field.
//   - An optional field (a pointer) takes the child's value when the child
//     sets it, even to false, 0 or "", and the parent's otherwise.
//   - A plain string or int takes the child's value, even an empty one, as in
//     the reference implementation. Such fields are keys or required values,
//     so where it matters the two are equal.
//   - The lists in appendLists (a file's append, filesystem, LUKS and RAID
//     options) have no identity: the parent's entries come first, then the
//     child's, duplicates included.
//   - Every other list is keyed (see mergeKey). The parent's entries keep
//     their order. One whose key the child's same list also has is merged
//     with that entry in place. One whose key the child has in another list
//     of the same namespace (see namespaces) is dropped: a child directory
//     replaces a parent file at the same path, and a kernel argument the child
//     says should not exist removes the parent's should-exist entry. Any other
//     is kept. The child's entries that matched nothing follow, in order.
//   - A child HTTP header without a value removes the parent's header of the
//     same name. One that matches nothing is kept, so that it still removes
//     the header from a config the result is later merged over.
//
// Keys are unique within a list of a valid config. In an invalid one,
// entries with the same key pair up in order: the first parent entry with a
// key merges with the first child entry with it, the second with the second,
// and the rest are kept or appended like unmatched entries. Nothing is lost,
// and validating the result still reports the duplicates.
//
// The result shares no memory with parent or child.
func Merge(parent, child Config) Config {
	return mergeStruct(reflect.ValueOf(parent), reflect.ValueOf(child)).Interface().(Config)
}

// modelField names a field of a model struct.
type modelField struct {
	in   reflect.Type
	name string
}

func fieldOf[T any](name string) modelField {
	return modelField{reflect.TypeFor[T](), name}
}

// appendLists are the lists whose entries have no identity, so merging
// concatenates them.
var appendLists = map[modelField]bool{
	fieldOf[File]("Append"):             true,
	fieldOf[Filesystem]("Options"):      true,
	fieldOf[Filesystem]("MountOptions"): true,
	fieldOf[Luks]("Options"):            true,
	fieldOf[Raid]("Options"):            true,
}

// namespaces groups the lists of one struct whose keys name the same things:
// an entry in one of the child's lists drops the parent's entries with the
// same key from the others.
var namespaces = map[modelField]string{
	fieldOf[Storage]("Files"):       "node path",
	fieldOf[Storage]("Directories"): "node path",
	fieldOf[Storage]("Links"):       "node path",

	fieldOf[KernelArguments]("ShouldExist"):    "kernel argument",
	fieldOf[KernelArguments]("ShouldNotExist"): "kernel argument",
}

// mergeKey returns the identity of an entry of a keyed list. ok is false for
// an entry type with no key; TestMergeCoversModel makes sure every list in
// the model has one.
func mergeKey(entry reflect.Value) (key string, ok bool) {
	switch e := entry.Interface().(type) {
	case string: // noProxy, raid devices, openOptions, groups, SSH keys, kernel arguments
		return e, true
	case Disk:
		return e.Device, true
	case Partition:
		switch {
		case e.Number != 0:
			return "number:" + strconv.Itoa(e.Number), true
		case e.Label != nil:
			return "label:" + *e.Label, true
		}
		return "", true
	case Raid:
		return e.Name, true
	case Luks:
		return e.Name, true
	case PasswdUser:
		return e.Name, true
	case PasswdGroup:
		return e.Name, true
	case Unit:
		return e.Name, true
	case Dropin:
		return e.Name, true
	case Filesystem:
		return e.Device, true
	case File:
		return e.Path, true
	case Directory:
		return e.Path, true
	case Link:
		return e.Path, true
	case Tang:
		return e.URL, true
	case HTTPHeader:
		return e.Name, true
	case Resource: // merge, certificateAuthorities
		if e.Source == nil {
			return "", true
		}
		return *e.Source, true
	}
	return "", false
}

// removesParent reports whether a child entry deletes the parent's entry it
// matches instead of merging with it: an HTTP header without a value does.
func removesParent(child reflect.Value) bool {
	h, ok := child.Interface().(HTTPHeader)
	return ok && h.Value == nil
}

func mustKey(entry reflect.Value) string {
	k, ok := mergeKey(entry)
	if !ok {
		panic(fmt.Sprintf("config: Merge: no key for list entries of type %s", entry.Type()))
	}
	return k
}

func mergeStruct(parent, child reflect.Value) reflect.Value {
	t := parent.Type()
	out := reflect.New(t).Elem()
	for i := range t.NumField() {
		p, c := parent.Field(i), child.Field(i)
		var v reflect.Value
		switch p.Kind() {
		case reflect.Struct:
			switch {
			case c.IsZero():
				v = clone(p)
			case p.IsZero():
				v = clone(c)
			default:
				v = mergeStruct(p, c)
			}
		case reflect.Pointer:
			v = clone(p)
			if !c.IsNil() {
				v = clone(c)
			}
		case reflect.Slice:
			v = mergeList(parent, child, i)
		default:
			v = clone(c)
		}
		out.Field(i).Set(v)
	}
	return out
}

// mergeList merges field i, a list, of the structs parent and child.
func mergeList(parent, child reflect.Value, i int) reflect.Value {
	t := parent.Type()
	f := modelField{t, t.Field(i).Name}
	p, c := parent.Field(i), child.Field(i)
	out := reflect.Zero(p.Type())
	if appendLists[f] {
		for _, l := range []reflect.Value{p, c} {
			for j := range l.Len() {
				out = reflect.Append(out, clone(l.Index(j)))
			}
		}
		return out
	}

	// Keys the child holds in the other lists of this list's namespace.
	shadowed := map[string]bool{}
	if ns, ok := namespaces[f]; ok {
		for j := range t.NumField() {
			if j != i && namespaces[modelField{t, t.Field(j).Name}] == ns {
				other := child.Field(j)
				for k := range other.Len() {
					shadowed[mustKey(other.Index(k))] = true
				}
			}
		}
	}

	// The child's entries by key, in order, so duplicates pair up in order.
	pending := map[string][]int{}
	for j := range c.Len() {
		k := mustKey(c.Index(j))
		pending[k] = append(pending[k], j)
	}
	matched := make([]bool, c.Len())
	for j := range p.Len() {
		pe := p.Index(j)
		k := mustKey(pe)
		if q := pending[k]; len(q) > 0 {
			pending[k] = q[1:]
			matched[q[0]] = true
			ce := c.Index(q[0])
			if removesParent(ce) {
				continue
			}
			if pe.Kind() == reflect.Struct {
				out = reflect.Append(out, mergeStruct(pe, ce))
			} else {
				out = reflect.Append(out, clone(ce))
			}
			continue
		}
		if shadowed[k] {
			continue
		}
		out = reflect.Append(out, clone(pe))
	}
	for j := range c.Len() {
		if !matched[j] {
			out = reflect.Append(out, clone(c.Index(j)))
		}
	}
	return out
}

// clone returns a deep copy of a model value: every pointer and slice in it
// is new.
func clone(v reflect.Value) reflect.Value {
	switch v.Kind() {
	case reflect.Pointer:
		if v.IsNil() {
			return reflect.Zero(v.Type())
		}
		out := reflect.New(v.Type().Elem())
		out.Elem().Set(clone(v.Elem()))
		return out
	case reflect.Slice:
		if v.IsNil() {
			return reflect.Zero(v.Type())
		}
		out := reflect.MakeSlice(v.Type(), v.Len(), v.Len())
		for i := range v.Len() {
			out.Index(i).Set(clone(v.Index(i)))
		}
		return out
	case reflect.Struct:
		out := reflect.New(v.Type()).Elem()
		for i := range v.NumField() {
			out.Field(i).Set(clone(v.Field(i)))
		}
		return out
	case reflect.Bool, reflect.String,
		reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64,
		reflect.Float32, reflect.Float64:
		return v
	}
	panic(fmt.Sprintf("config: cannot copy a %s", v.Type()))
}
