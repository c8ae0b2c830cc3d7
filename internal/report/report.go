// Package report tells a fleet how a machine's first boot went, to
// collectors it already runs: a JSON document POSTed to flint.report.url
// (Report, schema in docs/reports.md and docs/report.schema.json), and
// the boot's journal sent to a systemd-journal-remote server at
// flint.report.journal (Journal), in systemd-journal-upload's protocol.
//
// Stages run as separate processes, so each leaves its outcome in the
// state file (stages.Record, written by the engine); `flint report` reads
// them once at the end, after the files stage on success and from the
// emergency target on failure, and sends both within one deadline: a
// collector that is down costs the boot that long, never more. Nothing
// sent carries the config: its sources and its hash, and the failed
// stage's error with the config's secrets redacted (Redactor).
//
// Family: boot stages (internal/README.md).
package report

import (
	"bytes"
	"context"
	"crypto/sha512"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/flintboot/flint/internal/resource"
	"github.com/flintboot/flint/internal/stages"
)

// Schema is the version of the report's JSON: a change that removes or
// redefines a field increments it; new optional fields do not.
const Schema = 1

// Kernel arguments that turn the reports on.
const (
	ArgURL     = "flint.report.url"
	ArgJournal = "flint.report.journal"
)

// DefaultTimeout bounds everything `flint report` sends, retries included.
const DefaultTimeout = 10 * time.Second

// Outcomes of a report and of its stages.
const (
	Success = "success"
	Failure = "failure"
)

// Report is the JSON document (docs/reports.md).
type Report struct {
	Schema       int       `json:"schema"`
	Outcome      string    `json:"outcome"`
	Time         time.Time `json:"time"`
	MachineID    string    `json:"machineId,omitempty"`
	BootID       string    `json:"bootId,omitempty"`
	Platform     string    `json:"platform"`
	FlintVersion string    `json:"flintVersion"`
	Configs      []Config  `json:"configs"`
	// ConfigSHA512 is the hash of the rendered config the stages ran
	// with (the cache), "" when none was rendered.
	ConfigSHA512 string  `json:"configSha512,omitempty"`
	Stages       []Stage `json:"stages"`
	// FailedStage and Error say where and why the boot failed.
	FailedStage string `json:"failedStage,omitempty"`
	Error       string `json:"error,omitempty"`
	// CheckIn is the platform check-in's result, when known.
	CheckIn *CheckIn `json:"checkIn,omitempty"`
}

// Config is one config the fetch stages read.
type Config struct {
	Kind       string `json:"kind"`
	Source     string `json:"source"`
	Referenced bool   `json:"referenced"`
}

// Stage is how one stage ended.
type Stage struct {
	Name       string    `json:"name"`
	Start      time.Time `json:"start"`
	DurationMS int64     `json:"durationMs"`
	Outcome    string    `json:"outcome"`
	Error      string    `json:"error,omitempty"`
}

// CheckIn is the result of the platform check-in.
type CheckIn struct {
	Outcome string `json:"outcome"`
	Error   string `json:"error,omitempty"`
}

// Input is what Build reads.
type Input struct {
	// Outcome is what the caller knows ("success" after the last stage,
	// "failure" from the emergency target); "" infers it from the
	// stages' records.
	Outcome  string
	Platform string
	Version  string
	State    stages.State
	// Cache is the rendered config as cached (nil: none); only its hash
	// is reported.
	Cache    []byte
	Redactor *Redactor
	// MachineID and BootID identify the machine and the boot.
	MachineID, BootID string
	CheckIn           *CheckIn
	Now               time.Time
}

// Build makes the report from what the stages left.
func Build(in Input) Report {
	r := Report{
		Schema: Schema, Outcome: in.Outcome, Time: in.Now.UTC(), MachineID: in.MachineID, BootID: in.BootID,
		Platform: in.Platform, FlintVersion: in.Version, Configs: []Config{}, Stages: []Stage{}, CheckIn: in.CheckIn,
	}
	for _, c := range in.State.FetchedConfigs {
		r.Configs = append(r.Configs, Config{Kind: c.Kind, Source: in.Redactor.Text(c.Source), Referenced: c.Referenced})
	}
	if in.Cache != nil {
		sum := sha512.Sum512(in.Cache)
		r.ConfigSHA512 = hex.EncodeToString(sum[:])
	}
	for _, s := range in.State.Stages {
		st := Stage{Name: s.Name, Start: s.Start.UTC(), DurationMS: s.Duration, Outcome: s.Outcome}
		if s.Error != "" {
			st.Error = in.Redactor.Text(s.Error)
		}
		r.Stages = append(r.Stages, st)
		if s.Outcome == Failure {
			r.FailedStage, r.Error = st.Name, st.Error
		}
	}
	if r.Outcome == "" {
		r.Outcome = Success
		if r.FailedStage != "" {
			r.Outcome = Failure
		}
	}
	if r.Outcome == Failure && r.FailedStage == "" {
		r.Error = "no stage recorded a failure: a stage was killed or could not start; see journalctl -t flint"
	}
	return r
}

// Poster is what sending needs of *resource.Fetcher: one request, retried
// with backoff within the context's deadline.
type Poster interface {
	Get(ctx context.Context, r resource.Request) ([]byte, error)
}

// Send POSTs r to url as JSON through p.
func Send(ctx context.Context, p Poster, url string, r Report) error {
	body, err := json.Marshal(r)
	if err != nil {
		return fmt.Errorf("encoding the report: %w", err)
	}
	_, err = p.Get(ctx, resource.Request{URL: url, Method: http.MethodPost, Body: body,
		Header: http.Header{"Content-Type": {"application/json"}, "Accept": {"*/*"}}})
	return err
}

// MachineID reads the machine id (/etc/machine-id, which systemd fills
// in the initramfs too) and the boot id under root; a missing one is "".
func MachineID(root string) (machine, boot string) {
	read := func(p string) string {
		b, err := os.ReadFile(root + p)
		if err != nil {
			return ""
		}
		return strings.TrimSpace(string(b))
	}
	machine = read("/etc/machine-id")
	if machine == "uninitialized" {
		machine = ""
	}
	boot = strings.ReplaceAll(read("/proc/sys/kernel/random/boot_id"), "-", "")
	return machine, boot
}

// ReadCache reads the config cache; nil when there is none.
func ReadCache(path string) ([]byte, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading the config cache: %w", err)
	}
	return bytes.Clone(b), nil
}
