package passwd

import (
	"bytes"
	"strings"
	"testing"
)

// TestSHA512CryptVectors checks the test vectors published with Drepper's
// SHA-crypt specification, which cover custom rounds, a salt longer than 16
// characters, rounds below the minimum, and a password over 64 bytes.
func TestSHA512CryptVectors(t *testing.T) {
	for _, v := range []struct{ setting, key, want string }{
		{"$6$saltstring", "Hello world!",
			"$6$saltstring$svn8UoSVapNtMuq1ukKS4tPQd8iKwSMHWjl/O817G3uBnIFNjnQJuesI68u4OTLiBFdcbYEdFCoEOfaS35inz1"},
		{"$6$rounds=10000$saltstringsaltstring", "Hello world!",
			"$6$rounds=10000$saltstringsaltst$OW1/O6BYHV6BcXZu8QVeXbDWra3Oeqh0sbHbbMCVNSnCM/UrjmM0Dp8vOuZeHBy/YTBmSK6H9qs/y3RnOaw5v."},
		{"$6$rounds=5000$toolongsaltstring", "This is just a test",
			"$6$rounds=5000$toolongsaltstrin$lQ8jolhgVRVhY4b5pZKaysCLi0QBxGoNeKQzQ3glMhwllF7oGDZxUhx1yxdYcz/e1JSbq3y6JMxxl8audkUEm0"},
		{"$6$rounds=1400$anotherlongsaltstring", "a very much longer text to encrypt.  This one even stretches over morethan one line.",
			"$6$rounds=1400$anotherlongsalts$POfYwTEok97VWcjxIiSOjiykti.o/pQs.wPvMxQ6Fm7I6IoYN3CmLs66x9t0oSwbtEW7o7UmJEiDwGqd8p4ur1"},
		{"$6$rounds=77777$short", "we have a short salt string but not a short password",
			"$6$rounds=77777$short$WuQyW2YR.hBNpjjRhpYD/ifIw05xdfeEyQoMxIXbkvr0gge1a1x3yRULJ5CCaUeOxFmtlcGZelFl5CxtgfiAc0"},
		{"$6$rounds=123456$asaltof16chars..", "a short string",
			"$6$rounds=123456$asaltof16chars..$BtCwjqMJGx5hrJhZywWvt0RLE8uZ4oPwcelCjmw2kSYu.Ec6ycULevoBK25fs2xXgMNrCzIMVcgEJAstJeonj1"},
		{"$6$rounds=10$roundstoolow", "the minimum number is still observed",
			"$6$rounds=1000$roundstoolow$kUMsbe306n21p9R.FRkW3IGn.S9NPN0x50YhH1xhLsPuWGsUSklZt58jaTfF4ZEQpyUNGc0dqbpBYYBaHHrsX."},
	} {
		if got := SHA512Crypt(v.key, v.setting); got != v.want {
			t.Errorf("SHA512Crypt(%q, %q) = %s, want %s", v.key, v.setting, got, v.want)
		}
	}
}

// TestHashPassword checks that a generated hash has a 16-character salt
// from crypt's alphabet, verifies against its own setting, and differs with
// the salt.
func TestHashPassword(t *testing.T) {
	h, err := HashPassword("s3cret", bytes.NewReader(bytes.Repeat([]byte{0, 63, 64, 200}, 4)))
	if err != nil {
		t.Fatal(err)
	}
	if want := "$6$.z.6.z.6.z.6.z.6$"; !strings.HasPrefix(h, want) {
		t.Errorf("HashPassword salt: %s, want prefix %s", h, want)
	}
	if again := SHA512Crypt("s3cret", h); again != h {
		t.Errorf("SHA512Crypt(password, %s) = %s: the hash does not verify", h, again)
	}
	a, _ := HashPassword("s3cret", nil)
	b, _ := HashPassword("s3cret", nil)
	if a == b || len(a) != len(h) {
		t.Errorf("two random-salted hashes: %s and %s, want different hashes of length %d", a, b, len(h))
	}
	if _, err := HashPassword("x", bytes.NewReader(nil)); err == nil {
		t.Error("HashPassword with an empty random source succeeded")
	}
}

func TestHashPasswordRounds(t *testing.T) {
	got, err := HashPasswordRounds("Pa55word!", 10000, strings.NewReader(strings.Repeat("\x05", 16)))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(got, "$6$rounds=10000$3333333333333333$") {
		t.Errorf("HashPasswordRounds() = %q, want $6$rounds=10000$3333333333333333$…", got)
	}
	if again := SHA512Crypt("Pa55word!", got); again != got {
		t.Errorf("SHA512Crypt(password, %q) = %q, want the same hash", got, again)
	}
	if _, err := HashPasswordRounds("x", 10, nil); err == nil {
		t.Errorf("HashPasswordRounds() with 10 rounds = nil error, want one")
	}
}
