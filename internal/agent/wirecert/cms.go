package wirecert

import (
	"crypto/des"
	"crypto/rand"
	"crypto/rsa"
	"encoding/asn1"
	"fmt"
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

// DecryptEnvelopedData returns the content of the CMS EnvelopedData der
// (a ContentInfo, DER as WireServer sends it) encrypted to key with RSA
// PKCS#1 v1.5 key transport and 3DES-CBC, the only kind WireServer makes
// when asked for DES_EDE3_CBC.
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
		if !ri.Algorithm.Algorithm.Equal(oidRSAEncryption) {
			lastErr = fmt.Errorf("CMS key transport %v: %w", ri.Algorithm.Algorithm, ErrUnsupported)
			continue
		}
		// A fixed-size key for the session-key check keeps PKCS#1 v1.5
		// free of a padding oracle (RFC 3218 §2.3.2); a 3DES key is 24
		// bytes.
		cek := make([]byte, 24)
		if _, err := rand.Read(cek); err != nil {
			return nil, err
		}
		if err := rsa.DecryptPKCS1v15SessionKey(nil, key, ri.EncryptedKey, cek); err != nil {
			lastErr = fmt.Errorf("CMS content key: %w: %w", ErrDecrypt, err)
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
