package vbox

import (
	"errors"
	"testing"

	"github.com/flintboot/flint/internal/guestchan/vbox/vboxtest"
)

// TestGuestProps runs a connection over the fake driver: a property read,
// a missing one, a delete, a read-only one refused, the disconnect.
func TestGuestProps(t *testing.T) {
	dev := vboxtest.New(t, map[string]string{"/a": "1", "/ro": "x"})
	dev.Readonly["/ro"] = true
	g, err := Connect(dev)
	if err != nil {
		t.Fatalf("Connect() = %v", err)
	}
	if v, ok, err := g.Get("/a"); err != nil || !ok || string(v) != "1" {
		t.Errorf("Get(/a) = %q, %v, %v; want 1", v, ok, err)
	}
	if v, ok, err := g.Get("/missing"); err != nil || ok {
		t.Errorf("Get(/missing) = %q, %v, %v; want not found", v, ok, err)
	}
	if err := g.Delete("/a"); err != nil || dev.Props["/a"] != "" {
		t.Errorf("Delete(/a) = %v, properties %v", err, dev.Props)
	}
	var se *StatusError
	if err := g.Delete("/ro"); !errors.As(err, &se) {
		t.Errorf("Delete(/ro) = %v, want a StatusError", err)
	}
	if err := g.Disconnect(); err != nil || dev.Connected {
		t.Errorf("Disconnect() = %v, connected %v", err, dev.Connected)
	}
}
