package vmware

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/flintboot/flint/internal/guestchan/vmware/vmwaretest"
)

// TestGuestinfoOverBackdoor runs guestinfo end to end over the fake VMX:
// RPCI over the message protocol, with and without the high-bandwidth
// port, in the order the vmware provider reads and deletes its config
// (platform TestVMwareOverBackdoor checks the provider's side).
func TestGuestinfoOverBackdoor(t *testing.T) {
	const data = "eyJpZ25pdGlvbiI6eyJ2ZXJzaW9uIjoiMy40LjAifX0="
	for _, hb := range []bool{false, true} {
		t.Run(fmt.Sprintf("hb=%v", hb), func(t *testing.T) {
			vars := map[string]string{
				"guestinfo.ignition.config.data":          data,
				"guestinfo.ignition.config.data.encoding": "base64",
			}
			vmx := newFakeVMX(t, hb, vmwaretest.Guestinfo(vars))
			g := Guestinfo{RPC: backdoorRPC{bd: vmx}}
			ctx := context.Background()
			if v, ok, err := g.Get(ctx, "ovfenv"); err != nil || ok {
				t.Errorf("Get(ovfenv) = %q, %v, %v; want not set", v, ok, err)
			}
			if v, ok, err := g.Get(ctx, "ignition.config.data"); err != nil || !ok || v != data {
				t.Errorf("Get(ignition.config.data) = %q, %v, %v; want %q", v, ok, err, data)
			}
			if v, ok, err := g.Get(ctx, "ignition.config.data.encoding"); err != nil || !ok || v != "base64" {
				t.Errorf("Get(ignition.config.data.encoding) = %q, %v, %v; want base64", v, ok, err)
			}
			want := []string{"info-get guestinfo.ovfenv", "info-get guestinfo.ignition.config.data", "info-get guestinfo.ignition.config.data.encoding"}
			if fmt.Sprint(vmx.cmds) != fmt.Sprint(want) {
				t.Errorf("VMX received %q, want %q", vmx.cmds, want)
			}
			if err := g.Set(ctx, "ignition.config.data", "e30K"); err != nil {
				t.Fatalf("Set() error: %v", err)
			}
			if err := g.Set(ctx, "ignition.config.data.encoding", "base64"); err != nil {
				t.Fatalf("Set() error: %v", err)
			}
			if vars["guestinfo.ignition.config.data"] != "e30K" || vars["guestinfo.ignition.config.data.encoding"] != "base64" {
				t.Errorf("after Set guestinfo = %v", vars)
			}
			if len(vmx.channels) != 0 || vmx.opened != 5 {
				t.Errorf("channels opened %d, left open %d; want 5, none", vmx.opened, len(vmx.channels))
			}
		})
	}
}

// refusingRPC answers every command with a failure.
type refusingRPC struct{}

func (refusingRPC) Call(context.Context, string) ([]byte, error) {
	return []byte("0 Permission denied"), nil
}

func TestGuestinfoSetRefused(t *testing.T) {
	err := Guestinfo{RPC: refusingRPC{}}.Set(context.Background(), "k", "v")
	if err == nil || !strings.Contains(err.Error(), "the VMX refused") {
		t.Errorf("Set() on a refusing VMX = %v, want the refusal", err)
	}
}

func TestRPCIResult(t *testing.T) {
	tests := []struct {
		reply   string
		result  string
		success bool
		wantErr bool
	}{
		{reply: "1 value", result: "value", success: true},
		{reply: "1 ", result: "", success: true},
		{reply: "1", result: "", success: true},
		{reply: "1  two spaces", result: " two spaces", success: true},
		{reply: "0 No value found", result: "No value found"},
		{reply: "", wantErr: true},
		{reply: "OK", wantErr: true},
	}
	for _, tt := range tests {
		result, success, err := rpciResult([]byte(tt.reply))
		if (err != nil) != tt.wantErr || result != tt.result || success != tt.success {
			t.Errorf("rpciResult(%q) = %q, %v, %v; want %q, %v, error %v", tt.reply, result, success, err, tt.result, tt.success, tt.wantErr)
		}
	}
}
