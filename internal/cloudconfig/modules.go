package cloudconfig

import (
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/flintboot/flint/config"
	"github.com/flintboot/flint/internal/passwd"
	"github.com/flintboot/flint/internal/yamlnode"
	"go.yaml.in/yaml/v3"
)

// handler translates one top-level key.
type handler func(t *translator, key string, v *yaml.Node)

// handlers are the keys translated; the order of translation is
// cloud-init's order of its modules (config/cloud.cfg.tmpl), so that what
// a later module does wins, as it does on the booted system.
var handlers = []struct {
	keys []string
	fn   handler
}{
	{[]string{"bootcmd"}, (*translator).bootcmd},
	{[]string{"write_files"}, (*translator).writeFiles},
	{[]string{"disk_setup"}, (*translator).diskSetup},
	{[]string{"fs_setup"}, (*translator).fsSetup},
	{[]string{"mounts", "mount_default_fields"}, (*translator).mounts},
	{[]string{"swap"}, (*translator).swap},
	{[]string{"hostname", "fqdn", "prefer_fqdn_over_hostname", "preserve_hostname"}, (*translator).hostname},
	{[]string{"manage_resolv_conf", "resolv_conf"}, (*translator).resolvConf},
	{[]string{"ca_certs", "ca-certs"}, (*translator).caCerts},
	{[]string{"groups"}, (*translator).groups},
	{[]string{"users"}, (*translator).users},
	{[]string{"ssh_authorized_keys"}, (*translator).sshKeys},
	{[]string{"ssh_pwauth"}, (*translator).sshPwauth},
	{[]string{"chpasswd", "password"}, (*translator).chpasswd},
	{[]string{"locale", "locale_configfile"}, (*translator).locale},
	{[]string{"ntp"}, (*translator).ntp},
	{[]string{"timezone"}, (*translator).timezone},
	{[]string{"runcmd"}, (*translator).runcmd},
	{[]string{"power_state"}, (*translator).powerState},
}

// translate runs the handlers over the document's keys, then reports the
// keys no handler took.
func (t *translator) translate(doc []kv) {
	keyAt := map[string]kv{}
	t.doc = map[string]*yaml.Node{}
	for _, d := range doc {
		keyAt[d.key] = d
		t.doc[d.key] = d.v
		t.track(pos{d.label, line(d.k)})
	}
	done := map[string]bool{}
	for _, h := range handlers {
		for _, k := range h.keys {
			d, ok := keyAt[k]
			if !ok {
				continue
			}
			done[k] = true
			t.cur = pos{d.label, line(d.k)}
			h.fn(t, k, d.v)
		}
	}
	if len(t.sudo) > 0 {
		t.cur = t.sudoAt
		t.file("/etc/sudoers.d/90-cloud-init-users", 0o440, []byte("# sudo rules of cloud-config users (cloud-init writes them here too)\n"+strings.Join(t.sudo, "")))
	}
	for _, d := range doc {
		if done[d.key] {
			continue
		}
		t.cur = pos{d.label, line(d.k)}
		t.notTranslated(d.key, lastLine(d.v))
	}
	t.cur = pos{}
}

// here is where the key being translated is.
func (t *translator) here() pos { return t.cur }

// at is where a node is, in the part of the key being translated.
func (t *translator) at(n *yaml.Node) pos {
	p := t.cur
	if l := line(n); l > 0 {
		p.line = l
	}
	return p
}

// bad reports a value of the wrong shape: the key (or its entry) is left
// out.
func (t *translator) bad(n *yaml.Node, key, want string) {
	t.add(sevError, t.at(n), key, "expected %s: not translated", want)
}

// imageDecides are keys an image-based system decides by nature, with
// why nothing takes their place.
var imageDecides = map[string]string{
	"packages":                   "packages are chosen when the image is built: add them to the image (a Containerfile for bootc, an rpm-ostree layer, the image build's package list)",
	"package_update":             "the image is updated as a whole, by its own update mechanism",
	"package_upgrade":            "the image is updated as a whole, by its own update mechanism",
	"package_reboot_if_required": "the image is updated as a whole, by its own update mechanism",
	"apt":                        "repositories serve package installs, which the image decides; write a sources file with write_files if the booted system needs one",
	"apt_pipelining":             "apt's settings belong to the image",
	"yum_repos":                  "repositories serve package installs, which the image decides; write a .repo file with write_files if the booted system needs one",
	"yum_repo_dir":               "repositories serve package installs, which the image decides",
	"zypper":                     "repositories serve package installs, which the image decides",
	"apk_repos":                  "repositories serve package installs, which the image decides",
	"snap":                       "snaps are packages: build them into the image",
	"growpart":                   "the image's root partition is grown by the image (or with a partition resize in a config)",
	"resize_rootfs":              "the image's root filesystem is grown by the image",
	"final_message":              "cloud-init's own console message",
	"output":                     "cloud-init's own logging; flint logs to the journal",
	"reporting":                  "cloud-init's own event reporting",
	"ssh_deletekeys":             "the image has no host keys of another instance to delete: sshd-keygen makes them on the first boot",
	"ssh_genkeytypes":            "sshd-keygen makes the host keys on the first boot",
	"byobu_by_default":           "byobu is a package: build it into the image",
	"datasource":                 "cloud-init's datasource settings",
	"datasource_list":            "cloud-init's datasource settings",
	"cloud_init_modules":         "cloud-init's module lists",
	"cloud_config_modules":       "cloud-init's module lists",
	"cloud_final_modules":        "cloud-init's module lists",
	"merge_how":                  "the parts are merged with cloud-init's default (a later part's key replaces an earlier one's)",
	"merge_type":                 "the parts are merged with cloud-init's default (a later part's key replaces an earlier one's)",
	"system_info":                "cloud-init's distro settings",
	"vendor_data":                "cloud-init's vendor-data settings",
	"disable_ec2_metadata":       "cloud-init's metadata access",
	"apt_update":                 "the image is updated as a whole, by its own update mechanism",
	"apt_upgrade":                "the image is updated as a whole, by its own update mechanism",
}

// untranslatable are keys whose effect the config cannot have, with what
// to do instead.
var untranslatable = map[string]string{
	"chef":              "build the Chef client into the image and write its client.rb and validation key with write_files",
	"puppet":            "build the Puppet agent into the image and write its puppet.conf with write_files",
	"ansible":           "build ansible into the image and run ansible-pull from runcmd",
	"salt_minion":       "build the Salt minion into the image and write its minion config with write_files",
	"mcollective":       "build the agent into the image and write its config with write_files",
	"landscape":         "build the Landscape client into the image and write its client.conf with write_files",
	"ubuntu_pro":        "attach the machine with the pro client from runcmd",
	"ubuntu_advantage":  "attach the machine with the pro client from runcmd",
	"rh_subscription":   "register the machine with subscription-manager or rhc from runcmd",
	"spacewalk":         "register the machine from runcmd",
	"lxd":               "initialise LXD from runcmd (lxd init --preseed)",
	"wireguard":         "write the wg-quick or NetworkManager files with write_files and enable the unit",
	"ssh_import_id":     "write the keys themselves in ssh_authorized_keys",
	"phone_home":        "post to the URL from runcmd",
	"random_seed":       "the kernel seeds itself; write a seed file with write_files if one is needed",
	"seed_random":       "the kernel seeds itself; write a seed file with write_files if one is needed",
	"ssh_keys":          "write the host keys to /etc/ssh with write_files (mode 0600)",
	"manage_etc_hosts":  "write /etc/hosts with write_files",
	"disable_root":      "disable root logins in sshd with write_files (/etc/ssh/sshd_config.d) or lock root's password",
	"disable_root_opts": "disable root logins in sshd with write_files (/etc/ssh/sshd_config.d)",
	"keyboard":          "write /etc/vconsole.conf and /etc/X11/xorg.conf.d/00-keyboard.conf with write_files",
	"rsyslog":           "write the rsyslog configuration with write_files",
	"snappy":            "snaps are packages: build them into the image",
	"drivers":           "drivers belong in the image",
	"ubuntu_drivers":    "drivers belong in the image",
	"fan":               "write the fan configuration with write_files",
	"device_aliases":    "name the devices in disk_setup, fs_setup and mounts",
	"autoinstall":       "the Ubuntu installer's settings: not for a provisioned image",
	"write_metadata":    "write the files with write_files",
	"user":              "write the user in users",
	"runcmd_vendor":     "put the commands in runcmd",
}

// notTranslated reports a key no handler took, with the lines from the
// key to end, the last line of its value: the whole block is what is left
// out (or left to the image).
func (t *translator) notTranslated(key string, end int) {
	at := t.here()
	switch why, image := imageDecides[key]; {
	case image:
		t.add(sevInfo, at, key, "nothing to translate: %s", why)
	default:
		if hint, ok := untranslatable[key]; ok {
			t.add(sevError, at, key, "not translated: %s", hint)
		} else {
			t.add(sevError, at, key, "not a key flint translates (docs/cloud-config.md lists them): not translated")
		}
	}
	if e := &t.rep.Entries[len(t.rep.Entries)-1]; end > e.Line {
		e.End = end
	}
}

// shellify makes a script of a command list as cloud-init's
// util.shellify does: a string is a line as it is, a list is words each
// single-quoted.
func (t *translator) shellify(key string, v *yaml.Node) (string, bool) {
	var b strings.Builder
	b.WriteString("#!/bin/sh\n")
	list := yamlnode.Items(v)
	if list == nil && !yamlnode.IsNull(v) {
		t.bad(v, key, "a list of commands")
		return "", false
	}
	for i, it := range list {
		if s, ok := yamlnode.Scalar(it); ok {
			b.WriteString(s + "\n")
			continue
		}
		if yamlnode.IsNull(it) {
			continue
		}
		words := yamlnode.Items(it)
		if words == nil {
			t.bad(it, fmt.Sprintf("%s.%d", key, i), "a command line or a list of words")
			return "", false
		}
		var q []string
		for _, w := range words {
			s, _ := yamlnode.Scalar(w)
			q = append(q, "'"+strings.ReplaceAll(s, "'", `'\''`)+"'")
		}
		b.WriteString(strings.Join(q, " ") + "\n")
	}
	return b.String(), true
}

// The units that stand for cloud-init's stages. cloud-init runs bootcmd in
// its network stage (cloud-init-network.service: after the network is
// configured, before network-online.target, sshd and logins), runcmd and
// user scripts in its final stage (cloud-final.service: after
// network-online.target, time-sync.target and multi-user.target), and
// power_state last of all (systemd/*.service, config/cloud.cfg.tmpl).
const (
	bootUnitDeps  = "After=network.target\nBefore=network-online.target sshd.service systemd-user-sessions.service\n"
	finalUnitDeps = "Wants=network-online.target\nAfter=network-online.target time-sync.target multi-user.target\n"
)

func (t *translator) bootcmd(key string, v *yaml.Node) {
	script, ok := t.shellify(key, v)
	if !ok {
		return
	}
	t.file("/etc/flint/cloud-config/bootcmd", 0o700, []byte(script))
	t.unit("cloud-config-bootcmd.service", fmt.Sprintf("# bootcmd from %s\n[Unit]\nDescription=cloud-config bootcmd (every boot, before the network is online)\n%s\n"+
		"[Service]\nType=oneshot\nRemainAfterExit=yes\nExecStart=/bin/sh /etc/flint/cloud-config/bootcmd\n\n[Install]\nWantedBy=multi-user.target\n", t.here(), bootUnitDeps))
	t.add(sevWarning, t.here(), key, "runs on every boot from cloud-config-bootcmd.service, after the network is configured and before it is online, as cloud-init runs it; "+
		"$INSTANCE_ID, which cloud-init sets, is not set")
}

func (t *translator) runcmd(key string, v *yaml.Node) {
	script, ok := t.shellify(key, v)
	if !ok {
		return
	}
	t.file("/etc/flint/cloud-config/runcmd", 0o700, []byte(script))
	t.unit("cloud-config-runcmd.service", fmt.Sprintf("# runcmd from %s\n[Unit]\nDescription=cloud-config runcmd (once, late in the first boot)\nConditionFirstBoot=yes\n%s\n"+
		"[Service]\nType=oneshot\nRemainAfterExit=yes\nExecStart=/bin/sh /etc/flint/cloud-config/runcmd\n\n[Install]\nWantedBy=multi-user.target\n", t.here(), finalUnitDeps))
}

// script makes a user-data script a unit that runs it once, in cloud-
// init's final stage, as scripts_user does.
func (t *translator) script(at pos, n int, data []byte) {
	t.cur = at
	name := fmt.Sprintf("cloud-config-script-%d", n)
	file := "/etc/flint/cloud-config/" + name
	t.file(file, 0o700, data)
	t.unit(name+".service", fmt.Sprintf("# the script of %s\n[Unit]\nDescription=cloud-config user script %d (once, late in the first boot)\nConditionFirstBoot=yes\n%sAfter=cloud-config-runcmd.service\n\n"+
		"[Service]\nType=oneshot\nRemainAfterExit=yes\nExecStart=%s\n\n[Install]\nWantedBy=multi-user.target\n", at, n, finalUnitDeps, file))
	t.add(sevWarning, at, "", "the script becomes %s.service, which runs it once, late in the first boot, as cloud-init's scripts_user does", name)
	t.cur = pos{}
}

// writeFiles translates write_files (cc_write_files.py): deferred files
// too, since an image installs no packages that could overwrite them.
func (t *translator) writeFiles(key string, v *yaml.Node) {
	list := yamlnode.Items(v)
	if list == nil {
		t.bad(v, key, "a list of files")
		return
	}
	for i, it := range list {
		k := fmt.Sprintf("%s.%d", key, i)
		p, ok := yamlnode.Scalar(get(it, "path"))
		if !ok || !strings.HasPrefix(p, "/") {
			t.add(sevError, t.at(it), k, "a file needs an absolute path: not translated")
			continue
		}
		mode := 0o644
		if pn := get(it, "permissions"); !yamlnode.IsNull(pn) {
			m, ok := perms(pn)
			if !ok {
				t.add(sevWarning, t.at(pn), k+".permissions", "not an octal mode: 0644 is used, as cloud-init does")
			} else {
				mode = m
			}
		}
		var content []byte
		var source *string
		if src := get(it, "source"); !yamlnode.IsNull(src) {
			u, _ := yamlnode.Scalar(get(src, "uri"))
			if u == "" {
				t.add(sevError, t.at(src), k+".source", "needs a uri: not translated")
				continue
			}
			source = &u
			if h := pairs(get(src, "headers")); len(h) > 0 {
				t.add(sevWarning, t.at(src), k+".source.headers", "httpHeaders need spec 3.1.0; they are written if the output's version has them")
			}
		} else {
			enc, _ := yamlnode.Scalar(get(it, "encoding"))
			dec, err := decode(get(it, "content"), enc)
			if err != nil {
				t.add(sevError, t.at(it), k+".content", "%v: not translated", err)
				continue
			}
			content = dec
		}
		res := config.Resource{Source: source}
		if source == nil {
			res.Source = ptr(dataURL(content))
		} else {
			for _, h := range pairs(get(get(it, "source"), "headers")) {
				val, _ := yamlnode.Scalar(h.v)
				res.HTTPHeaders = append(res.HTTPHeaders, config.HTTPHeader{Name: h.key, Value: ptr(val)})
			}
		}
		owner, _ := yamlnode.Scalar(get(it, "owner"))
		if owner == "" {
			owner = "root:root"
		}
		u, g, _ := strings.Cut(owner, ":")
		node := config.Node{Path: p}
		if u != "" {
			node.User.Name = ptr(u)
		}
		if g != "" {
			node.Group.Name = ptr(g)
		}
		f := config.File{Node: node, Mode: ptr(mode)}
		if app, _ := boolean(get(it, "append")); app {
			f.Append = []config.Resource{res}
		} else {
			f.Overwrite = ptr(true)
			f.Contents = res
		}
		t.origin("storage.files", len(t.cfg.Storage.Files))
		t.cfg.Storage.Files = append(t.cfg.Storage.Files, f)
	}
}

// perms reads write_files' permissions as cloud-init's decode_perms does:
// an integer as it is (YAML 1.1 reads 0644 as octal), anything else as an
// octal string.
func perms(n *yaml.Node) (int, bool) {
	if isInt(n) {
		v, _ := integer(n)
		return int(v), v >= 0 && v <= 0o7777
	}
	s, _ := yamlnode.Scalar(n)
	v, err := strconv.ParseInt(strings.TrimPrefix(s, "0o"), 8, 32)
	return int(v), err == nil && v >= 0 && v <= 0o7777
}

func (t *translator) hostname(key string, v *yaml.Node) {
	if key != "hostname" && key != "fqdn" {
		return // read with them
	}
	// Both given: translate once, at the first.
	if key == "fqdn" && t.hostDone {
		return
	}
	t.hostDone = true
	doc := t.doc
	if b, _ := boolean(doc["preserve_hostname"]); b {
		t.add(sevInfo, t.here(), key, "nothing to translate: preserve_hostname is true, so cloud-init leaves the hostname alone")
		return
	}
	// cloudinit/util.py, get_hostname_fqdn: with fqdn, the hostname is
	// the one given or the fqdn's first label; a hostname with a dot (and
	// no fqdn) is the fqdn, and its first label the hostname.
	fqdn, hasFQDN := yamlnode.Scalar(doc["fqdn"])
	host, _ := yamlnode.Scalar(doc["hostname"])
	switch {
	case hasFQDN && host == "":
		host, _, _ = strings.Cut(fqdn, ".")
	case !hasFQDN && strings.Index(host, ".") > 0:
		fqdn = host
		host, _, _ = strings.Cut(host, ".")
	}
	name := host
	if b, _ := boolean(doc["prefer_fqdn_over_hostname"]); b {
		if fqdn != "" {
			name = fqdn
		} else {
			t.add(sevWarning, t.here(), key, "prefer_fqdn_over_hostname: cloud-init takes the fqdn from the cloud's metadata, which a config does not know; the hostname is written")
		}
	}
	if name == "" {
		t.bad(v, key, "a host name")
		return
	}
	t.file("/etc/hostname", 0o644, []byte(name+"\n"))
}

func (t *translator) timezone(key string, v *yaml.Node) {
	tz, ok := yamlnode.Scalar(v)
	if !ok || strings.Contains(tz, "..") || strings.HasPrefix(tz, "/") {
		t.bad(v, key, "a zone name such as Europe/Berlin")
		return
	}
	t.origin("storage.links", len(t.cfg.Storage.Links))
	t.cfg.Storage.Links = append(t.cfg.Storage.Links, config.Link{Node: config.Node{Path: "/etc/localtime", Overwrite: ptr(true)},
		Target: ptr("../usr/share/zoneinfo/" + tz)})
}

func (t *translator) locale(key string, v *yaml.Node) {
	if key != "locale" {
		return
	}
	l, ok := yamlnode.Scalar(v)
	if !ok {
		if b, isBool := boolean(v); isBool && !b {
			t.add(sevInfo, t.here(), key, "nothing to translate: false leaves the image's locale")
			return
		}
		t.bad(v, key, "a locale name such as en_US.UTF-8")
		return
	}
	file := "/etc/locale.conf" // systemd's locale.conf(5)
	if f, ok := yamlnode.Scalar(t.doc["locale_configfile"]); ok && strings.HasPrefix(f, "/") {
		file = f
	}
	t.file(file, 0o644, []byte("LANG="+l+"\n"))
}

// users translates users (cc_users_groups.py with the distro's
// create_user, cloudinit/distros/__init__.py).
func (t *translator) users(key string, v *yaml.Node) {
	var list []*yaml.Node
	if s, ok := yamlnode.Scalar(v); ok {
		for _, name := range strings.Split(s, ",") {
			list = append(list, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: strings.TrimSpace(name), Line: v.Line})
		}
	} else if list = yamlnode.Items(v); list == nil {
		t.bad(v, key, "a list of users")
		return
	}
	for i, it := range list {
		k := fmt.Sprintf("%s.%d", key, i)
		if name, ok := yamlnode.Scalar(it); ok {
			if name == "default" {
				t.add(sevInfo, t.at(it), k, "the distro's default user: %s (the image makes it; -default-user names another)", t.defaultUser)
				continue
			}
			t.user(name)
			continue
		}
		name, ok := yamlnode.Scalar(get(it, "name"))
		if get(it, "snapuser") != nil && !ok {
			t.add(sevError, t.at(it), k+".snapuser", "a snap store user (snap create-user): not translated; write the user in users")
			continue
		}
		if !ok || name == "" {
			t.add(sevError, t.at(it), k, "a user needs a name: not translated")
			continue
		}
		t.oneUser(k, it, name)
	}
}

// oneUser translates one user's mapping.
func (t *translator) oneUser(k string, it *yaml.Node, name string) {
	u := t.user(name)
	createGroups := true
	if b, ok := boolean(get(it, "create_groups")); ok {
		createGroups = b
	}
	lock := true // cloud-init locks the password unless lock_passwd: false
	var hash string
	for _, p := range pairs(it) {
		kk := k + "." + p.key
		switch p.key {
		case "name":
		case "gecos":
			s, _ := yamlnode.Scalar(p.v)
			u.Gecos = ptr(s)
		case "homedir":
			s, _ := yamlnode.Scalar(p.v)
			u.HomeDir = ptr(s)
		case "shell":
			s, _ := yamlnode.Scalar(p.v)
			u.Shell = ptr(s)
		case "primary_group":
			s, _ := yamlnode.Scalar(p.v)
			u.PrimaryGroup = ptr(s)
			if createGroups && s != name {
				t.group(s)
			}
		case "groups":
			var gs []string
			if yamlnode.Deref(p.v).Kind == yaml.MappingNode { // deprecated: names as keys
				for _, g := range pairs(p.v) {
					gs = append(gs, g.key)
				}
			} else if gs, _ = strs(p.v); gs == nil && !yamlnode.IsNull(p.v) {
				t.bad(p.v, kk, "a list of groups")
				continue
			}
			u.Groups = append(u.Groups, gs...)
			if createGroups {
				for _, g := range gs {
					t.group(g)
				}
			}
		case "system":
			b, _ := boolean(p.v)
			u.System = ptr(b)
		case "no_create_home":
			b, _ := boolean(p.v)
			u.NoCreateHome = ptr(b)
		case "no_user_group":
			b, _ := boolean(p.v)
			u.NoUserGroup = ptr(b)
		case "no_log_init":
			b, _ := boolean(p.v)
			u.NoLogInit = ptr(b)
		case "uid":
			n, ok := integer(p.v)
			if !ok {
				t.bad(p.v, kk, "a number")
				continue
			}
			u.UID = ptr(int(n))
		case "lock_passwd":
			lock, _ = boolean(p.v)
		case "passwd", "hashed_passwd":
			hash, _ = yamlnode.Scalar(p.v)
		case "plain_text_passwd":
			pw, _ := yamlnode.Scalar(p.v)
			if pw == "" {
				continue
			}
			h, err := passwd.HashPassword(pw, t.rnd)
			if err != nil {
				t.err = err
				return
			}
			hash = h
		case "ssh_authorized_keys":
			keys, ok := strs(p.v)
			if !ok {
				t.bad(p.v, kk, "a list of keys")
				continue
			}
			if _, isStr := yamlnode.Scalar(p.v); isStr {
				keys = []string{strings.TrimSpace(yamlnode.Deref(p.v).Value)}
			}
			u.SSHAuthorizedKeys = append(u.SSHAuthorizedKeys, keys...)
		case "sudo":
			t.sudoRules(kk, name, p.v)
		case "create_groups":
		case "expiredate", "inactive", "selinux_user", "ssh_redirect_user", "snapuser", "doas", "ssh_import_id":
			t.add(sevError, t.at(p.k), kk, "not translated: a config cannot say it; set it from runcmd (usermod, chage)")
		default:
			t.add(sevError, t.at(p.k), kk, "not a user key cloud-init reads: not translated")
		}
	}
	switch {
	case hash != "" && lock:
		// distros/__init__.py, create_user: the password is set, then
		// locked (passwd -l) unless lock_passwd is false.
		u.PasswordHash = ptr("!" + strings.TrimPrefix(hash, "!"))
		t.add(sevWarning, t.at(it), k, "the password is locked, as cloud-init locks it unless lock_passwd is false: logins with it fail")
	case hash != "":
		u.PasswordHash = ptr(hash)
	}
}

// sudoRules adds a user's sudo rules to the sudoers drop-in cloud-init
// writes (distros/__init__.py, write_sudo_rules).
func (t *translator) sudoRules(k, name string, v *yaml.Node) {
	if b, ok := boolean(v); ok && !b || yamlnode.IsNull(v) {
		return
	}
	rules, ok := strs(v)
	if s, isStr := yamlnode.Scalar(v); isStr {
		rules, ok = []string{s}, true // a rule may hold commas
	}
	if !ok {
		t.bad(v, k, "a sudo rule or a list of them")
		return
	}
	var b strings.Builder
	fmt.Fprintf(&b, "\n# User rules for %s\n", name)
	for _, r := range rules {
		if strings.ContainsAny(r, "\n") {
			t.bad(v, k, "a rule on one line")
			return
		}
		fmt.Fprintf(&b, "%s %s\n", name, r)
	}
	t.sudo = append(t.sudo, b.String())
	if t.sudoAt == (pos{}) {
		t.sudoAt = t.here()
	}
}

// groups translates groups: names, or names with their members
// (cc_users_groups.py, distros/__init__.py create_group).
func (t *translator) groups(key string, v *yaml.Node) {
	var entries []kv
	switch {
	case yamlnode.Items(v) != nil:
		for _, it := range yamlnode.Items(v) {
			if s, ok := yamlnode.Scalar(it); ok {
				entries = append(entries, kv{key: s, k: it})
				continue
			}
			entries = append(entries, pairs(it)...)
		}
	case pairs(v) != nil:
		entries = pairs(v)
	default:
		names, ok := strs(v)
		if !ok {
			t.bad(v, key, "a list of groups")
			return
		}
		for _, n := range names {
			entries = append(entries, kv{key: n, k: v})
		}
	}
	for _, e := range entries {
		t.group(e.key)
		members, _ := strs(e.v)
		for _, m := range members {
			u := t.user(m)
			u.Groups = append(u.Groups, e.key)
		}
	}
}

func (t *translator) sshKeys(key string, v *yaml.Node) {
	keys, ok := strs(v)
	if _, isStr := yamlnode.Scalar(v); isStr || !ok {
		t.bad(v, key, "a list of keys")
		return
	}
	u := t.user(t.defaultUser)
	u.SSHAuthorizedKeys = append(u.SSHAuthorizedKeys, keys...)
	t.add(sevWarning, t.here(), key, "the keys go to the distro's default user, %s (-default-user names another); cloud-init also gives root a key that only prints \"login as %s\"", t.defaultUser, t.defaultUser)
}

// sshPwauth writes PasswordAuthentication as an sshd drop-in, where
// cloud-init edits sshd_config (cc_set_passwords.py, handle_ssh_pwauth);
// sshd takes the first value it reads, so the drop-in is named to sort
// first.
func (t *translator) sshPwauth(key string, v *yaml.Node) {
	val := ""
	if b, ok := boolean(v); ok {
		val = map[bool]string{true: "yes", false: "no"}[b]
	} else if s, _ := yamlnode.Scalar(v); strings.EqualFold(s, "unchanged") || yamlnode.IsNull(v) {
		t.add(sevInfo, t.here(), key, "nothing to translate: unchanged leaves sshd's setting")
		return
	}
	if val == "" {
		t.bad(v, key, "true, false or unchanged")
		return
	}
	t.file("/etc/ssh/sshd_config.d/10-cloud-config.conf", 0o600, []byte("# ssh_pwauth from cloud-config\nPasswordAuthentication "+val+"\n"))
	t.add(sevWarning, t.here(), key, "written as /etc/ssh/sshd_config.d/10-cloud-config.conf, which sshd reads only if its sshd_config includes sshd_config.d (current Fedora, Debian and Ubuntu do)")
}

// chpasswd sets passwords (cc_set_passwords.py); expire, true by default,
// makes a first-boot unit expire them, as cloud-init does at once.
func (t *translator) chpasswd(key string, v *yaml.Node) {
	if key == "password" {
		pw, ok := yamlnode.Scalar(v)
		if !ok {
			t.bad(v, key, "a password")
			return
		}
		t.setPassword(key, v, t.defaultUser, pw, false)
		return
	}
	expire := true
	if b, ok := boolean(get(v, "expire")); ok {
		expire = b
	}
	var names []string
	for i, it := range yamlnode.Items(get(v, "users")) {
		k := fmt.Sprintf("%s.users.%d", key, i)
		name, _ := yamlnode.Scalar(get(it, "name"))
		pw, hasPW := yamlnode.Scalar(get(it, "password"))
		typ, _ := yamlnode.Scalar(get(it, "type"))
		if typ == "" {
			typ = "hash"
		}
		switch {
		case name == "":
			t.add(sevError, t.at(it), k, "needs a name: not translated")
			continue
		case typ == "RANDOM" || !hasPW:
			t.add(sevError, t.at(it), k, "a RANDOM password is made and printed on the console by cloud-init: not translated; give a password")
			continue
		}
		if t.setPassword(k, it, name, pw, typ == "hash") {
			names = append(names, name)
		}
	}
	if l := get(v, "list"); !yamlnode.IsNull(l) {
		lines, _ := strs(l)
		if s, ok := yamlnode.Scalar(l); ok {
			lines = nil // one entry a line, as cloud-init's splitlines
			for _, ln := range strings.Split(s, "\n") {
				if ln = strings.TrimSpace(ln); ln != "" {
					lines = append(lines, ln)
				}
			}
		}
		for i, ln := range lines {
			name, pw, ok := strings.Cut(ln, ":")
			k := fmt.Sprintf("%s.list.%d", key, i)
			switch {
			case !ok:
				t.add(sevError, t.at(l), k, "not user:password: not translated")
			case pw == "R" || pw == "RANDOM":
				t.add(sevError, t.at(l), k, "a RANDOM password is made and printed on the console by cloud-init: not translated; give a password")
			default:
				if t.setPassword(k, l, name, pw, listHash.MatchString(pw) && !strings.Contains(pw, ":")) {
					names = append(names, name)
				}
			}
		}
	}
	if expire && len(names) > 0 {
		sort.Strings(names)
		var b strings.Builder
		fmt.Fprintf(&b, "# chpasswd.expire from %s\n[Unit]\nDescription=cloud-config chpasswd: expire the passwords set\nConditionFirstBoot=yes\nBefore=systemd-user-sessions.service sshd.service\n\n[Service]\nType=oneshot\nRemainAfterExit=yes\n", t.here())
		for _, n := range names {
			fmt.Fprintf(&b, "ExecStart=/usr/bin/passwd --expire %s\n", n)
		}
		b.WriteString("\n[Install]\nWantedBy=multi-user.target\n")
		t.unit("cloud-config-chpasswd-expire.service", b.String())
		t.add(sevWarning, t.here(), key, "expire (true unless set to false): the passwords expire on the first boot, from cloud-config-chpasswd-expire.service, so each must be changed at the first login")
	}
}

// listHash is how cc_set_passwords.py tells a hashed chpasswd.list entry
// from a plaintext one (a yescrypt $y$ hash is not among them: it is
// taken, and hashed, as plaintext, as cloud-init does).
var listHash = regexp.MustCompile(`^\$(1|2a|2y|5|6)(\$.+){2}`)

// isHash reports a crypt(3) hash.
func isHash(s string) bool {
	f := strings.Split(s, "$")
	return len(f) >= 4 && f[0] == "" && (f[1] == "1" || f[1] == "2a" || f[1] == "2y" || f[1] == "5" || f[1] == "6" || f[1] == "y")
}

// setPassword sets a user's password hash, hashing a plaintext one.
func (t *translator) setPassword(k string, n *yaml.Node, name, pw string, hashed bool) bool {
	if pw == "" {
		t.add(sevError, t.at(n), k, "an empty password would allow logins without one: not translated")
		return false
	}
	h := pw
	if !hashed {
		var err error
		if h, err = passwd.HashPassword(pw, t.rnd); err != nil {
			t.err = err
			return false
		}
	} else if !isHash(pw) {
		t.add(sevWarning, t.at(n), k, "type hash, but not a crypt(3) hash: used as given, and logins with it will fail")
	}
	t.user(name).PasswordHash = ptr(h)
	return true
}

// ntp writes the servers and pools for the NTP client the image runs
// (cc_ntp.py): chrony and systemd-timesyncd both, unless ntp_client names
// one.
func (t *translator) ntp(key string, v *yaml.Node) {
	if b, ok := boolean(get(v, "enabled")); ok && !b {
		t.add(sevInfo, t.here(), key, "nothing to translate: enabled is false, so cloud-init leaves NTP alone")
		return
	}
	servers, _ := strs(get(v, "servers"))
	pools, _ := strs(get(v, "pools"))
	client, _ := yamlnode.Scalar(get(v, "ntp_client"))
	if client == "" {
		client = "auto"
	}
	if len(servers)+len(pools) == 0 {
		t.add(sevInfo, t.here(), key, "nothing to translate: no servers or pools, so the image's defaults stay")
		return
	}
	for _, p := range pairs(v) {
		switch p.key {
		case "enabled", "servers", "pools", "ntp_client":
		default:
			t.add(sevWarning, t.at(p.k), key+"."+p.key, "not translated: only servers, pools and ntp_client are")
		}
	}
	switch client {
	case "auto", "chrony":
		var b strings.Builder
		b.WriteString("# ntp from cloud-config\n")
		for _, s := range servers {
			fmt.Fprintf(&b, "server %s iburst\n", s)
		}
		for _, s := range pools {
			fmt.Fprintf(&b, "pool %s iburst\n", s)
		}
		t.file("/etc/chrony.d/cloud-config.conf", 0o644, []byte(b.String()))
	}
	switch client {
	case "auto", "systemd-timesyncd":
		t.file("/etc/systemd/timesyncd.conf.d/cloud-config.conf", 0o644,
			[]byte("# ntp from cloud-config\n[Time]\nNTP="+strings.Join(append(append([]string{}, servers...), pools...), " ")+"\n"))
	case "chrony":
	default:
		t.add(sevError, t.here(), key+".ntp_client", "%s: flint writes chrony's and systemd-timesyncd's configuration only: not translated", client)
		return
	}
	t.add(sevWarning, t.here(), key, "written for chrony (/etc/chrony.d/cloud-config.conf, read only if chrony.conf has confdir /etc/chrony.d) and systemd-timesyncd, as ntp_client says; cloud-init replaces the client's whole configuration")
}

// caCerts writes the trusted certificates where the Fedora family's trust
// store takes anchors from (cc_ca_certs.py names them
// cloud-init-ca-cert-N.crt).
func (t *translator) caCerts(key string, v *yaml.Node) {
	if b, _ := boolean(get(v, "remove_defaults")); b {
		t.add(sevError, t.here(), key+".remove_defaults", "removing the distro's certificates is not translated: build the image without them")
	}
	certs, _ := strs(get(v, "trusted"))
	if s, ok := yamlnode.Scalar(get(v, "trusted")); ok {
		certs = []string{s}
	}
	for i, c := range certs {
		t.file(fmt.Sprintf("/etc/pki/ca-trust/source/anchors/cloud-init-ca-cert-%d.crt", i+1), 0o644, []byte(strings.TrimRight(c, "\n")+"\n"))
	}
	if len(certs) > 0 {
		t.add(sevWarning, t.here(), key, "written to /etc/pki/ca-trust/source/anchors (the Fedora family's trust store, which update-ca-trust reads at boot on Fedora CoreOS); Debian's is /usr/local/share/ca-certificates")
	}
}

// resolvConf writes /etc/resolv.conf when manage_resolv_conf is true, as
// cc_resolv_conf.py does.
func (t *translator) resolvConf(key string, v *yaml.Node) {
	if key != "resolv_conf" {
		return
	}
	if b, _ := boolean(t.doc["manage_resolv_conf"]); !b {
		t.add(sevInfo, t.here(), key, "nothing to translate: manage_resolv_conf is not true, so cloud-init leaves resolv.conf alone")
		return
	}
	var b strings.Builder
	b.WriteString("# resolv_conf from cloud-config\n")
	ns, _ := strs(get(v, "nameservers"))
	for _, n := range ns {
		fmt.Fprintf(&b, "nameserver %s\n", n)
	}
	if s, ok := strs(get(v, "searchdomains")); ok && len(s) > 0 {
		fmt.Fprintf(&b, "search %s\n", strings.Join(s, " "))
	}
	if d, ok := yamlnode.Scalar(get(v, "domain")); ok {
		fmt.Fprintf(&b, "domain %s\n", d)
	}
	if s, ok := strs(get(v, "sortlist")); ok && len(s) > 0 {
		fmt.Fprintf(&b, "sortlist %s\n", strings.Join(s, " "))
	}
	var opts []string
	for _, p := range pairs(get(v, "options")) {
		if b, ok := boolean(p.v); ok {
			if b {
				opts = append(opts, p.key)
			}
			continue
		}
		s, _ := yamlnode.Scalar(p.v)
		opts = append(opts, p.key+":"+s)
	}
	if len(opts) > 0 {
		fmt.Fprintf(&b, "options %s\n", strings.Join(opts, " "))
	}
	t.file("/etc/resolv.conf", 0o644, []byte(b.String()))
	t.add(sevWarning, t.here(), key, "written as /etc/resolv.conf; where systemd-resolved or NetworkManager manage that file (a link), they replace it")
}

// powerState reboots or powers off once the first boot's final stage is
// done (cc_power_state_change.py).
func (t *translator) powerState(key string, v *yaml.Node) {
	mode, _ := yamlnode.Scalar(get(v, "mode"))
	flag := map[string]string{"reboot": "-r", "poweroff": "-P", "halt": "-H"}[mode]
	if flag == "" {
		t.bad(get(v, "mode"), key+".mode", "reboot, poweroff or halt")
		return
	}
	delay := "now"
	if d := get(v, "delay"); !yamlnode.IsNull(d) {
		if n, ok := integer(d); ok && isInt(d) {
			delay = "+" + strconv.FormatInt(n, 10)
		} else {
			delay, _ = yamlnode.Scalar(d)
		}
	}
	if delay != "now" && !validDelay(delay) {
		t.bad(get(v, "delay"), key+".delay", `"now", "+MINUTES" or a number of minutes`)
		return
	}
	cmd := "shutdown " + flag + " " + delay
	if m, ok := yamlnode.Scalar(get(v, "message")); ok {
		cmd += " '" + strings.ReplaceAll(m, "'", `'\''`) + "'"
	}
	cond := get(v, "condition")
	if b, ok := boolean(cond); ok && !b {
		t.add(sevInfo, t.here(), key, "nothing to translate: condition is false")
		return
	}
	if s, ok := yamlnode.Scalar(cond); ok && !isBool(cond) {
		cmd = s + " && " + cmd
	} else if words := yamlnode.Items(cond); words != nil {
		var q []string
		for _, w := range words {
			s, _ := yamlnode.Scalar(w)
			q = append(q, "'"+strings.ReplaceAll(s, "'", `'\''`)+"'")
		}
		cmd = strings.Join(q, " ") + " && " + cmd
	}
	t.unit("cloud-config-power-state.service", fmt.Sprintf("# power_state from %s\n[Unit]\nDescription=cloud-config power_state (once, last in the first boot)\nConditionFirstBoot=yes\n%s"+
		"After=cloud-config-runcmd.service cloud-config-chpasswd-expire.service\n\n[Service]\nType=oneshot\nExecStart=/bin/sh -c %s\n\n[Install]\nWantedBy=multi-user.target\n",
		t.here(), finalUnitDeps, strconv.Quote(cmd)))
	if get(v, "timeout") != nil {
		t.add(sevInfo, t.here(), key+".timeout", "nothing to translate: the unit runs after runcmd has finished, so there is nothing to wait for")
	}
}

func isBool(n *yaml.Node) bool { _, ok := boolean(n); return ok }

// validDelay reports "+N".
func validDelay(s string) bool {
	n, err := strconv.Atoi(strings.TrimPrefix(s, "+"))
	return strings.HasPrefix(s, "+") && err == nil && n >= 0
}
