// Package wirecert reads the SSH keys Azure Stack hands a VM through
// WireServer's certificates endpoint, where Azure Stack has no instance
// metadata service (IMDS).
//
// The exchange (WALinuxAgent's, and Afterburn's on azurestack): the agent
// makes a throw-away RSA key and a self-signed certificate for it, and asks
// the goal state's Certificates URL with the certificate in
// x-ms-guest-agent-public-x509-cert and x-ms-cipher-name: DES_EDE3_CBC. The
// answer's <Data> is a CMS EnvelopedData (RFC 5652 §6) encrypted to that
// certificate: RSA PKCS#1 v1.5 key transport, 3DES-CBC content. Its
// plaintext is a PKCS#12 (PFX, RFC 7292) with the certificates whose public
// keys are the SSH keys; Windows puts them in an encryptedData under an
// empty password with pbeWithSHAAnd40BitRC2-CBC (or 3DES).
//
// Only the standard library is used: encoding/asn1 for the structures,
// crypto/rsa and crypto/des for the ciphers; the PKCS#12 key derivation
// (RFC 7292 appendix B) and RC2 (RFC 2268) are written here because the
// standard library has neither.
//
// Family: config sources, platforms and agent (internal/README.md).
package wirecert
