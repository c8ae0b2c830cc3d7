package config

// Upgrade turns a config of version from, held in the model's types (as
// a translator builds it), into the newest model, as Parse does after
// decoding: every semantic change between from and Newest is applied in
// order, and the newest version stamped. Fields that merely appeared need
// nothing: they are absent from older configs.
func Upgrade(cfg *Config, from Version) {
	upgrade(cfg, from)
}

// upgrade is Upgrade.
func upgrade(cfg *Config, from Version) {
	if !from.AtLeast(V3_1) {
		dropUnverifiableReplaceHash(cfg)
	}
	if !from.AtLeast(V3_3) {
		dropEmptyClevisCustom(cfg)
	}
	if !from.AtLeast(V3_6) {
		maskSpecialModeBits(cfg)
	}
	cfg.Ignition.Version = Newest.String()
}

// maskSpecialModeBits clears setuid, setgid and sticky bits from file and
// directory modes. Before spec 3.6.0 Ignition never applied them, so an
// old config that sets them (and was warned about it) keeps its old meaning.
func maskSpecialModeBits(cfg *Config) {
	for i := range cfg.Storage.Files {
		if m := cfg.Storage.Files[i].Mode; m != nil {
			masked := *m &^ 0o7000
			cfg.Storage.Files[i].Mode = &masked
		}
	}
	for i := range cfg.Storage.Directories {
		if m := cfg.Storage.Directories[i].Mode; m != nil {
			masked := *m &^ 0o7000
			cfg.Storage.Directories[i].Mode = &masked
		}
	}
}

// dropEmptyClevisCustom clears a spec 3.2 custom clevis pin whose pin and
// config are both empty. In 3.2 they were plain strings and such a custom
// object meant no custom pin at all; in the newest model a needsNetwork left
// behind would be a custom pin without a pin.
func dropEmptyClevisCustom(cfg *Config) {
	for i := range cfg.Storage.Luks {
		cu := &cfg.Storage.Luks[i].Clevis.Custom
		if !notEmpty(cu.Pin) && !notEmpty(cu.Config) {
			*cu = ClevisCustom{}
		}
	}
}

// dropUnverifiableReplaceHash clears a spec 3.0.0 ignition.config.replace
// hash given without a source. 3.0.0 accepted it (its config reference had
// no such check) and it verified nothing, since nothing is fetched; from
// 3.1.0 on it is an error, so the upgraded config must not carry it.
func dropUnverifiableReplaceHash(cfg *Config) {
	r := &cfg.Ignition.Config.Replace
	if r.Source == nil {
		r.Verification = Verification{}
	}
}
