package files

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"time"
)

// result is the result file's content, with Ignition's field names
// (coreos/ignition internal/exec/stages/files/filesystemEntries.go,
// createResultFile): distro tools read it to tell when and whether a machine
// was provisioned.
type result struct {
	ProvisioningBootID string          `json:"provisioningBootID"`
	ProvisioningDate   string          `json:"provisioningDate"`
	UserConfigProvided bool            `json:"userConfigProvided"`
	PreviousReport     json.RawMessage `json:"previousReport,omitempty"`
	// InterruptedStage is the stage an earlier first boot died in, when
	// this one went on over its stamp (flint's own field).
	InterruptedStage string `json:"interruptedStage,omitempty"`
}

// writeResult writes /etc/.ignition-result.json (0600, replacing it). A
// result file already there means provisioning ran before on this root:
// unless the system is a live image (is-live-image succeeds), that is
// worth a warning, and the old report is kept inside the new one.
func (s *stage) writeResult(ctx context.Context) error {
	op := s.op("files", "writing the result file "+ResultPath)
	read := s.BootID
	if read == nil {
		read = bootID
	}
	id, err := read()
	if err != nil {
		return op.Fail(fmt.Errorf("%s: reading the boot id: %w", ResultPath, err))
	}
	now := time.Now
	if s.Now != nil {
		now = s.Now
	}
	res := result{ProvisioningBootID: id, ProvisioningDate: now().Format(time.RFC3339), UserConfigProvided: s.UserConfigProvided, InterruptedStage: s.InterruptedStage}
	prev, err := s.root.ReadFile(ResultPath)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return op.Fail(fmt.Errorf("%s: %w", ResultPath, err))
	default:
		if _, lerr := s.Runner.Run(ctx, "is-live-image"); lerr != nil {
			s.log.Warn("provisioning has already run on this system: the new result file keeps the previous report (" + ResultPath + ")")
			if json.Valid(prev) {
				res.PreviousReport = prev
			}
		}
	}
	data, err := json.Marshal(res)
	if err != nil {
		return op.Fail(err)
	}
	if err := s.root.WriteFile(ResultPath, data, 0o600); err != nil {
		return op.Fail(fmt.Errorf("%s: %w", ResultPath, err))
	}
	if s.selinux {
		s.relabel = append(s.relabel, ResultPath)
	}
	op.Finish()
	return nil
}
