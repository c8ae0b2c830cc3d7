package config

// The model describes the newest spec (3.7.0-experimental). Older versions are
// decoded into the same types: a field that did not exist yet in the declared
// version is reported as an unused key and left at its zero value (see
// versions.go for the table of which version introduced what).
//
// Optional scalars are pointers because the spec distinguishes "absent" from
// the zero value (an unset sizeMiB keeps the existing partition size, 0 means
// "as large as possible"). Plain strings and ints are keys or required values;
// merge.go relies on that distinction.

// Config is a parsed, validated and upgraded config.
type Config struct {
	Ignition        Ignition        `json:"ignition"`
	KernelArguments KernelArguments `json:"kernelArguments,omitzero"`
	Passwd          Passwd          `json:"passwd,omitzero"`
	Storage         Storage         `json:"storage,omitzero"`
	Systemd         Systemd         `json:"systemd,omitzero"`
}

// Ignition holds the config's own metadata: its version and where to find
// more config.
type Ignition struct {
	Config   IgnitionConfig `json:"config,omitzero"`
	Proxy    Proxy          `json:"proxy,omitzero"`
	Security Security       `json:"security,omitzero"`
	Timeouts Timeouts       `json:"timeouts,omitzero"`
	Version  string         `json:"version"`
}

// IgnitionConfig lists configs to merge into this one, or one to replace it.
type IgnitionConfig struct {
	Merge   []Resource `json:"merge,omitempty"`
	Replace Resource   `json:"replace,omitzero"`
}

// Proxy configures the HTTP proxies used for every fetch.
type Proxy struct {
	HTTPProxy  *string  `json:"httpProxy,omitempty"`
	HTTPSProxy *string  `json:"httpsProxy,omitempty"`
	NoProxy    []string `json:"noProxy,omitempty"`
}

// Security holds TLS settings.
type Security struct {
	TLS TLS `json:"tls,omitzero"`
}

// TLS lists certificate authorities trusted in addition to the system pool.
type TLS struct {
	CertificateAuthorities []Resource `json:"certificateAuthorities,omitempty"`
}

// Timeouts bound HTTP fetches, in seconds.
type Timeouts struct {
	HTTPResponseHeaders *int `json:"httpResponseHeaders,omitempty"`
	HTTPTotal           *int `json:"httpTotal,omitempty"`
}

// Resource is something to fetch: a URL, how it is compressed, headers to
// send and the hash the decompressed data must have.
type Resource struct {
	Compression  *string      `json:"compression,omitempty"`
	HTTPHeaders  []HTTPHeader `json:"httpHeaders,omitempty"`
	Source       *string      `json:"source,omitempty"`
	Verification Verification `json:"verification,omitzero"`
}

// HTTPHeader is one header sent with an http(s) fetch. A nil Value in a child
// config removes the parent's header of the same name when merging.
type HTTPHeader struct {
	Name  string  `json:"name"`
	Value *string `json:"value,omitempty"`
}

// Verification holds the expected hash, "<function>-<hex digest>".
type Verification struct {
	Hash *string `json:"hash,omitempty"`
}

// KernelArguments lists arguments that must or must not be on the kernel
// command line.
type KernelArguments struct {
	ShouldExist    []string `json:"shouldExist,omitempty"`
	ShouldNotExist []string `json:"shouldNotExist,omitempty"`
}

// Passwd lists users and groups.
type Passwd struct {
	Groups []PasswdGroup `json:"groups,omitempty"`
	Users  []PasswdUser  `json:"users,omitempty"`
}

// PasswdUser is a user to create, modify or delete.
type PasswdUser struct {
	Gecos             *string  `json:"gecos,omitempty"`
	Groups            []string `json:"groups,omitempty"`
	HomeDir           *string  `json:"homeDir,omitempty"`
	Name              string   `json:"name"`
	NoCreateHome      *bool    `json:"noCreateHome,omitempty"`
	NoLogInit         *bool    `json:"noLogInit,omitempty"`
	NoUserGroup       *bool    `json:"noUserGroup,omitempty"`
	PasswordHash      *string  `json:"passwordHash,omitempty"`
	PrimaryGroup      *string  `json:"primaryGroup,omitempty"`
	SSHAuthorizedKeys []string `json:"sshAuthorizedKeys,omitempty"`
	Shell             *string  `json:"shell,omitempty"`
	ShouldExist       *bool    `json:"shouldExist,omitempty"`
	System            *bool    `json:"system,omitempty"`
	UID               *int     `json:"uid,omitempty"`
}

// PasswdGroup is a group to create, modify or delete.
type PasswdGroup struct {
	Gid          *int    `json:"gid,omitempty"`
	Name         string  `json:"name"`
	PasswordHash *string `json:"passwordHash,omitempty"`
	ShouldExist  *bool   `json:"shouldExist,omitempty"`
	System       *bool   `json:"system,omitempty"`
}

// Storage describes disks, arrays, encrypted volumes, filesystems and the
// files, directories and links to write.
type Storage struct {
	Directories []Directory  `json:"directories,omitempty"`
	Disks       []Disk       `json:"disks,omitempty"`
	Files       []File       `json:"files,omitempty"`
	Filesystems []Filesystem `json:"filesystems,omitempty"`
	Links       []Link       `json:"links,omitempty"`
	Luks        []Luks       `json:"luks,omitempty"`
	Raid        []Raid       `json:"raid,omitempty"`
}

// Disk is a block device and the GPT partitions it must have.
type Disk struct {
	Device     string      `json:"device"`
	Partitions []Partition `json:"partitions,omitempty"`
	WipeTable  *bool       `json:"wipeTable,omitempty"`
}

// Partition is one GPT partition entry.
type Partition struct {
	GUID               *string `json:"guid,omitempty"`
	Label              *string `json:"label,omitempty"`
	Number             int     `json:"number,omitempty"`
	Resize             *bool   `json:"resize,omitempty"`
	ShouldExist        *bool   `json:"shouldExist,omitempty"`
	SizeMiB            *int    `json:"sizeMiB,omitempty"`
	StartMiB           *int    `json:"startMiB,omitempty"`
	TypeGUID           *string `json:"typeGuid,omitempty"`
	WipePartitionEntry *bool   `json:"wipePartitionEntry,omitempty"`
}

// Raid is a software RAID array built with mdadm.
type Raid struct {
	Devices []string `json:"devices,omitempty"`
	Level   *string  `json:"level,omitempty"`
	Name    string   `json:"name"`
	Options []string `json:"options,omitempty"`
	Spares  *int     `json:"spares,omitempty"`
}

// Luks is a LUKS2 volume.
type Luks struct {
	Cex         Cex      `json:"cex,omitzero"`
	Clevis      Clevis   `json:"clevis,omitzero"`
	Device      *string  `json:"device,omitempty"`
	Discard     *bool    `json:"discard,omitempty"`
	KeyFile     Resource `json:"keyFile,omitzero"`
	Label       *string  `json:"label,omitempty"`
	Name        string   `json:"name"`
	OpenOptions []string `json:"openOptions,omitempty"`
	Options     []string `json:"options,omitempty"`
	UUID        *string  `json:"uuid,omitempty"`
	WipeVolume  *bool    `json:"wipeVolume,omitempty"`
}

// Cex enables an IBM Crypto Express (s390x) secure key for a LUKS volume.
type Cex struct {
	Enabled *bool `json:"enabled,omitempty"`
}

// Clevis binds a LUKS volume to tang servers, a TPM2, or a custom pin.
type Clevis struct {
	Custom    ClevisCustom `json:"custom,omitzero"`
	Tang      []Tang       `json:"tang,omitempty"`
	Threshold *int         `json:"threshold,omitempty"`
	Tpm2      *bool        `json:"tpm2,omitempty"`
}

// ClevisCustom is a clevis pin with its JSON config, passed through as is.
type ClevisCustom struct {
	Config       *string `json:"config,omitempty"`
	NeedsNetwork *bool   `json:"needsNetwork,omitempty"`
	Pin          *string `json:"pin,omitempty"`
}

// Tang is one tang server.
type Tang struct {
	Advertisement *string `json:"advertisement,omitempty"`
	Thumbprint    *string `json:"thumbprint,omitempty"`
	URL           string  `json:"url,omitempty"`
}

// Filesystem is a filesystem to create or reuse, and where to mount it while
// provisioning.
type Filesystem struct {
	Device         string   `json:"device"`
	Format         *string  `json:"format,omitempty"`
	Label          *string  `json:"label,omitempty"`
	MountOptions   []string `json:"mountOptions,omitempty"`
	Options        []string `json:"options,omitempty"`
	Path           *string  `json:"path,omitempty"`
	UUID           *string  `json:"uuid,omitempty"`
	WipeFilesystem *bool    `json:"wipeFilesystem,omitempty"`
}

// Node holds what files, directories and links share.
type Node struct {
	Group     NodeGroup `json:"group,omitzero"`
	Overwrite *bool     `json:"overwrite,omitempty"`
	Path      string    `json:"path"`
	User      NodeUser  `json:"user,omitzero"`
}

// NodeUser names a node's owner by id or by name, not both.
type NodeUser struct {
	ID   *int    `json:"id,omitempty"`
	Name *string `json:"name,omitempty"`
}

// NodeGroup names a node's group by id or by name, not both.
type NodeGroup struct {
	ID   *int    `json:"id,omitempty"`
	Name *string `json:"name,omitempty"`
}

// File is a regular file.
type File struct {
	Node
	Append   []Resource `json:"append,omitempty"`
	Contents Resource   `json:"contents,omitzero"`
	Mode     *int       `json:"mode,omitempty"`
}

// Directory is a directory.
type Directory struct {
	Node
	Mode *int `json:"mode,omitempty"`
}

// Link is a symbolic or hard link.
type Link struct {
	Node
	Hard   *bool   `json:"hard,omitempty"`
	Target *string `json:"target,omitempty"`
}

// Systemd lists units.
type Systemd struct {
	Units []Unit `json:"units,omitempty"`
}

// Unit is a systemd unit: its contents, drop-ins, and whether it is enabled
// or masked.
type Unit struct {
	Contents *string  `json:"contents,omitempty"`
	Dropins  []Dropin `json:"dropins,omitempty"`
	Enabled  *bool    `json:"enabled,omitempty"`
	Mask     *bool    `json:"mask,omitempty"`
	Name     string   `json:"name"`
}

// Dropin is a unit drop-in file, written to <unit>.d/<name>.
type Dropin struct {
	Contents *string `json:"contents,omitempty"`
	Name     string  `json:"name"`
}
