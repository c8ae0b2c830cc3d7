package wirecert

import (
	"bytes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"math/bits"
	"os/exec"
	"testing"
)

// rc2Encrypt is RFC 2268 §3's encryption of one block with the expanded
// key k, written from the RFC's pseudo-code for the tests only (the agent
// never encrypts): R[i] += K[j] + (R[i-1] & R[i-2]) + (~R[i-1] & R[i-3]),
// then R[i] rotated left by 1, 2, 3, 5; a mashing round adds
// K[R[i-1] & 63]. Five mixing rounds, a mashing round, six mixing
// rounds, a mashing round, five mixing rounds.
func rc2Encrypt(k *[64]uint16, dst, src []byte) {
	var r [4]uint16
	for i := range r {
		r[i] = binary.LittleEndian.Uint16(src[2*i:])
	}
	shift := [4]int{1, 2, 3, 5}
	j := 0
	mixingRound := func() {
		for i := 0; i < 4; i++ {
			r[i] += k[j] + (r[(i+3)%4] & r[(i+2)%4]) + (^r[(i+3)%4] & r[(i+1)%4])
			j++
			r[i] = bits.RotateLeft16(r[i], shift[i])
		}
	}
	mashingRound := func() {
		for i := 0; i < 4; i++ {
			r[i] += k[r[(i+3)%4]&63]
		}
	}
	for range 5 {
		mixingRound()
	}
	mashingRound()
	for range 6 {
		mixingRound()
	}
	mashingRound()
	for range 5 {
		mixingRound()
	}
	for i := range r {
		binary.LittleEndian.PutUint16(dst[2*i:], r[i])
	}
}

// rc2Vectors are all eight test vectors of RFC 2268 §5: key, effective
// key bits, plaintext, ciphertext.
var rc2Vectors = []struct {
	key          string
	bits         int
	plain, crypt string
}{
	{"0000000000000000", 63, "0000000000000000", "ebb773f993278eff"},
	{"ffffffffffffffff", 64, "ffffffffffffffff", "278b27e42e2f0d49"},
	{"3000000000000000", 64, "1000000000000001", "30649edf9be7d2c2"},
	{"88", 64, "0000000000000000", "61a8a244adacccf0"},
	{"88bca90e90875a", 64, "0000000000000000", "6ccf4308974c267f"},
	{"88bca90e90875a7f0f79c384627bafb2", 64, "0000000000000000", "1a807d272bbe5db1"},
	{"88bca90e90875a7f0f79c384627bafb2", 128, "0000000000000000", "2269552ab0f85ca6"},
	{"88bca90e90875a7f0f79c384627bafb216f80a6f85920584c42fceb0be255daf1e", 129, "0000000000000000", "5b78d3a43dfff1f1"},
}

// The test-only encryption is the RFC's: it turns every plaintext of §5
// into its ciphertext, so the round trip of FuzzRC2 checks the decryption
// against an implementation that itself matches the known answers.
func TestRC2EncryptKnownAnswers(t *testing.T) {
	for _, v := range rc2Vectors {
		c, err := newRC2(unhex(t, v.key), v.bits)
		if err != nil {
			t.Fatalf("newRC2(%s, %d) = %v", v.key, v.bits, err)
		}
		got := make([]byte, 8)
		rc2Encrypt(&c.(*rc2Cipher).k, got, unhex(t, v.plain))
		if hex.EncodeToString(got) != v.crypt {
			t.Errorf("rc2Encrypt(key %s, %d bits, %s) = %x, want %s", v.key, v.bits, v.plain, got, v.crypt)
		}
		c.Decrypt(got, unhex(t, v.crypt))
		if hex.EncodeToString(got) != v.plain {
			t.Errorf("RC2 key %s (%d bits): Decrypt(%s) = %x, want %s", v.key, v.bits, v.crypt, got, v.plain)
		}
	}
}

// The cipher against another implementation: openssl's RC2 (its legacy
// provider) in CBC mode, for the three key sizes it names, whose effective
// key length is the key's length in bits (openssl enc pads a shorter -K
// with zeros, so the key length is fixed by the cipher's name).
func TestRC2AgainstOpenSSL(t *testing.T) {
	path, err := exec.LookPath("openssl")
	if err != nil {
		t.Skip("openssl not found: the cross-check needs it (apt-get install openssl)")
	}
	for _, tc := range []struct {
		name   string
		keyLen int
	}{{"rc2-40-cbc", 5}, {"rc2-64-cbc", 8}, {"rc2-cbc", 16}} {
		for range 4 {
			key, iv, plain := make([]byte, tc.keyLen), make([]byte, 8), make([]byte, 64)
			rand.Read(key)
			rand.Read(iv)
			rand.Read(plain)
			cmd := exec.Command(path, "enc", "-e", "-"+tc.name, "-provider", "legacy", "-provider", "default", "-nopad", "-K", hex.EncodeToString(key), "-iv", hex.EncodeToString(iv))
			cmd.Stdin = bytes.NewReader(plain)
			crypt, err := cmd.Output()
			if err != nil {
				t.Skipf("openssl enc -%s: %v (no legacy provider?)", tc.name, err)
			}
			c, err := newRC2(key, 8*tc.keyLen)
			if err != nil {
				t.Fatalf("newRC2(%d-byte key) = %v", tc.keyLen, err)
			}
			got := make([]byte, len(crypt))
			cipher.NewCBCDecrypter(c, iv).CryptBlocks(got, crypt)
			if !bytes.Equal(got, plain) {
				t.Errorf("%s key %x iv %x: decrypting openssl's %x = %x, want %x", tc.name, key, iv, crypt, got, plain)
			}
		}
	}
}

// FuzzRC2 checks that decryption undoes RFC 2268's encryption for any
// key of 1 to 128 bytes and any effective key length of 1 to 1024 bits,
// and that keys or lengths outside those ranges are refused, not a
// panic.
func FuzzRC2(f *testing.F) {
	for _, v := range rc2Vectors {
		f.Add(unhex(f, v.key), v.bits, unhex(f, v.plain))
	}
	f.Add([]byte{1, 2, 3, 4, 5}, 40, []byte("8 bytes!"))
	f.Fuzz(func(t *testing.T, key []byte, effective int, plain []byte) {
		c, err := newRC2(key, effective)
		valid := len(key) >= 1 && len(key) <= 128 && effective >= 1 && effective <= 1024
		if !valid {
			if err == nil {
				t.Errorf("newRC2(%d-byte key, %d bits) accepted parameters RFC 2268 does not allow", len(key), effective)
			}
			return
		}
		if err != nil {
			t.Fatalf("newRC2(%d-byte key, %d bits) = %v", len(key), effective, err)
		}
		if len(plain) < 8 {
			return
		}
		plain = plain[:8]
		crypt := make([]byte, 8)
		rc2Encrypt(&c.(*rc2Cipher).k, crypt, plain)
		got := make([]byte, 8)
		c.Decrypt(got, crypt)
		if !bytes.Equal(got, plain) {
			t.Errorf("RC2 %x (%d bits): Decrypt(Encrypt(%x)) = %x", key, effective, plain, got)
		}
		// In place, as CBC decryption calls it.
		c.Decrypt(crypt, crypt)
		if !bytes.Equal(crypt, plain) {
			t.Errorf("RC2 %x (%d bits): Decrypt in place = %x, want %x", key, effective, crypt, plain)
		}
	})
}
