package main

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/flintboot/flint/config"
	"github.com/flintboot/flint/internal/input"
)

// translateV2 is flint translate for a spec 2.x JSON config (2.0.0 to
// 2.4.0, 2.4.0-experimental): the spec 3.x config, indented by two spaces
// when pretty (as Butane's --pretty), and the report, whose entries name the
// 2.x document's paths and positions. handled is false when src is not a
// spec 2.x config (input.IsSpec2: a Butane config is one whatever its
// ignition section says), which then goes to the Butane translator.
func translateV2(src []byte, pretty bool) (cfg []byte, report config.Report, handled bool, err error) {
	if !input.IsSpec2(src) {
		return nil, config.Report{}, false, nil
	}
	out, report, err := config.TranslateSpec2(src)
	if err != nil {
		return nil, report, true, fmt.Errorf("spec 2.x config: %w", err)
	}
	if pretty {
		var b bytes.Buffer
		if err := json.Indent(&b, out, "", "  "); err != nil {
			return nil, report, true, fmt.Errorf("spec 2.x config: %w", err)
		}
		out = b.Bytes()
	}
	return out, report, true, nil
}
