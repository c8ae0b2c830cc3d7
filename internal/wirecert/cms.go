package wirecert

import (
	"crypto/des"
	"crypto/rsa"
	"crypto/x509/pkix"
	"encoding/asn1"
	"fmt"
	"math/big"
)

var (
	oidEnvelopedData = asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 7, 3}
	oidRSAEncryption = asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 1, 1}
	oidDESEDE3CBC    = asn1.ObjectIdentifier{1, 2, 840, 113549, 3, 7}
)

// envelopedData is RFC 5652 §6.1's EnvelopedData; OriginatorInfo ([0])
// and UnprotectedAttrs ([1]) are allowed and ignored.
type envelopedData struct {
	Version          int
	OriginatorInfo   asn1.RawValue   `asn1:"optional,tag:0"`
	RecipientInfos   []asn1.RawValue `asn1:"set"`
	Content          encryptedContentInfo
	UnprotectedAttrs asn1.RawValue `asn1:"optional,tag:1"`
}

// keyTransRecipientInfo is RFC 5652 §6.2.1's KeyTransRecipientInfo; the
// recipient identifier is not compared: the agent's key is the only one.
type keyTransRecipientInfo struct {
	Version      int
	RID          asn1.RawValue
	Algorithm    algorithmIdentifier
	EncryptedKey []byte
}

// issuerAndSerialNumber is RFC 5652 §10.2.4's IssuerAndSerialNumber.
type issuerAndSerialNumber struct {
	Issuer       pkix.RDNSequence
	SerialNumber *big.Int
}

// checkRecipientID checks a RecipientIdentifier (RFC 5652 §6.2.1) is one:
// an IssuerAndSerialNumber, or a [0] SubjectKeyIdentifier. It is not
// compared with anything, but a malformed one means a malformed
// structure, as openssl reads it.
func checkRecipientID(rid asn1.RawValue) error {
	switch {
	case rid.Class == asn1.ClassUniversal && rid.Tag == asn1.TagSequence:
		var ias issuerAndSerialNumber
		return unmarshal(rid.FullBytes, &ias, "CMS recipient identifier")
	case rid.Class == asn1.ClassContextSpecific && rid.Tag == 0 && !rid.IsCompound:
		return nil
	}
	return fmt.Errorf("CMS recipient identifier with tag %d of class %d: %w", rid.Tag, rid.Class, ErrFormat)
}

// DecryptEnvelopedData returns the content of the CMS EnvelopedData der
// (a ContentInfo, DER as WireServer sends it) encrypted to key with RSA
// PKCS#1 v1.5 key transport and 3DES-CBC, the only kind WireServer makes
// when asked for DES_EDE3_CBC. key must be single-use, as a Recipient's
// is: whether decryption failed is reported (ErrDecrypt) for every
// message, which over many messages to one key would be a padding
// oracle.
func DecryptEnvelopedData(key *rsa.PrivateKey, der []byte) ([]byte, error) {
	var ci contentInfo
	if err := unmarshal(der, &ci, "CMS ContentInfo"); err != nil {
		return nil, err
	}
	if !ci.ContentType.Equal(oidEnvelopedData) {
		return nil, fmt.Errorf("CMS content %v, want envelopedData: %w", ci.ContentType, ErrFormat)
	}
	var ed envelopedData
	if err := unmarshal(ci.Content.Bytes, &ed, "CMS EnvelopedData"); err != nil {
		return nil, err
	}
	if alg := ed.Content.Algorithm.Algorithm; !alg.Equal(oidDESEDE3CBC) {
		return nil, fmt.Errorf("CMS content encryption %v, want des-ede3-cbc: %w", alg, ErrUnsupported)
	}
	iv, err := octets(ed.Content.Algorithm.Parameters.FullBytes, "CMS des-ede3-cbc IV")
	if err != nil {
		return nil, err
	}
	var lastErr error = fmt.Errorf("CMS EnvelopedData: no recipient: %w", ErrFormat)
	for _, raw := range ed.RecipientInfos {
		var ri keyTransRecipientInfo
		if err := unmarshal(raw.FullBytes, &ri, "CMS KeyTransRecipientInfo"); err != nil {
			// Other recipient kinds ([1] kari, [2] kekri …) are not for us.
			lastErr = err
			continue
		}
		if err := checkRecipientID(ri.RID); err != nil {
			lastErr = err
			continue
		}
		if !ri.Algorithm.Algorithm.Equal(oidRSAEncryption) {
			lastErr = fmt.Errorf("CMS key transport %v: %w", ri.Algorithm.Algorithm, ErrUnsupported)
			continue
		}
		// PKCS#1 v1.5 with an explicit error, not the implicit rejection
		// of rsa.DecryptPKCS1v15SessionKey: that one hands a wrong key a
		// random content key, whose CBC padding then checks out once in
		// about 256 tries, so a message not for this key decrypted to
		// garbage instead of failing. The padding oracle it guards
		// against (RFC 3218 §2.3.2) needs thousands of answers from one
		// key; the agent's Recipient key lives for one request and
		// decrypts one message.
		cek, err := rsa.DecryptPKCS1v15(nil, key, ri.EncryptedKey)
		if err != nil {
			lastErr = fmt.Errorf("CMS content key: %w: %w", ErrDecrypt, err)
			continue
		}
		if len(cek) != 24 {
			lastErr = fmt.Errorf("CMS content key of %d bytes, want 24 for des-ede3-cbc: %w", len(cek), ErrDecrypt)
			continue
		}
		block, err := des.NewTripleDESCipher(cek)
		if err != nil {
			return nil, err
		}
		out, err := cbcDecrypt(block, iv, ed.Content.Content)
		if err != nil {
			lastErr = fmt.Errorf("CMS content: %w", err)
			continue
		}
		return out, nil
	}
	return nil, lastErr
}
