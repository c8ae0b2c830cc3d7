package resource

import (
	"net/http"
	"strings"
	"testing"
	"time"
)

// The vectors are the example values published in AWS's Signature
// Version 4 documentation: the S3 "GET Object" example of "Signature
// Calculations for the Authorization Header: Transferring Payload in a
// Single Chunk", its "GET Bucket Lifecycle" and "Get Bucket (List
// Objects)" siblings, and the get-vanilla-query-order-key-case case of the
// general SigV4 test suite.
func TestSignV4PublishedVectors(t *testing.T) {
	s3Creds := awsCredentials{AccessKeyID: "AKIAIOSFODNN7EXAMPLE", SecretAccessKey: "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"}
	s3Time := time.Date(2013, 5, 24, 0, 0, 0, 0, time.UTC)
	tests := []struct {
		name          string
		url           string
		header        http.Header
		creds         awsCredentials
		region        string
		service       string
		now           time.Time
		wantCanonHash string // hex SHA-256 of the canonical request, when published
		wantAuth      string
	}{
		{
			name:          "S3 GET Object",
			url:           "https://examplebucket.s3.amazonaws.com/test.txt",
			header:        http.Header{"Range": {"bytes=0-9"}, "X-Amz-Content-Sha256": {emptySHA256}},
			creds:         s3Creds,
			region:        "us-east-1",
			service:       "s3",
			now:           s3Time,
			wantCanonHash: "7344ae5b7ee6c3e7e6b0fe0640412a37625d1fbfff95c48bbb2dc43964946972",
			wantAuth: "AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request, " +
				"SignedHeaders=host;range;x-amz-content-sha256;x-amz-date, " +
				"Signature=f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41",
		},
		{
			name:    "S3 GET Bucket Lifecycle",
			url:     "https://examplebucket.s3.amazonaws.com/?lifecycle",
			header:  http.Header{"X-Amz-Content-Sha256": {emptySHA256}},
			creds:   s3Creds,
			region:  "us-east-1",
			service: "s3",
			now:     s3Time,
			wantAuth: "AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request, " +
				"SignedHeaders=host;x-amz-content-sha256;x-amz-date, " +
				"Signature=fea454ca298b7da1c68078a5d1bdbfbbe0d65c699e0f91ac7a200a0136783543",
		},
		{
			name:    "S3 List Objects",
			url:     "https://examplebucket.s3.amazonaws.com/?max-keys=2&prefix=J",
			header:  http.Header{"X-Amz-Content-Sha256": {emptySHA256}},
			creds:   s3Creds,
			region:  "us-east-1",
			service: "s3",
			now:     s3Time,
			wantAuth: "AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request, " +
				"SignedHeaders=host;x-amz-content-sha256;x-amz-date, " +
				"Signature=34b48302e7b5fa45bde8084f4b7868a86f0a534bc59db6670ed5711ef69dc6f7",
		},
		{
			name:    "test suite get-vanilla-query-order-key-case",
			url:     "https://example.amazonaws.com/?Param2=value2&Param1=value1",
			header:  http.Header{},
			creds:   awsCredentials{AccessKeyID: "AKIDEXAMPLE", SecretAccessKey: "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY"},
			region:  "us-east-1",
			service: "service",
			now:     time.Date(2015, 8, 30, 12, 36, 0, 0, time.UTC),
			wantAuth: "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/service/aws4_request, " +
				"SignedHeaders=host;x-amz-date, " +
				"Signature=b97d918cfa904a5beff61c982a1b6f458b799221646efd99d3219ec94cdf2500",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req, err := http.NewRequest(http.MethodGet, tt.url, nil)
			if err != nil {
				t.Fatal(err)
			}
			req.Header = tt.header
			signV4(req, tt.creds, tt.region, tt.service, emptySHA256, tt.now)
			if got := req.Header.Get("Authorization"); got != tt.wantAuth {
				t.Errorf("Authorization =\n %s\nwant\n %s", got, tt.wantAuth)
			}
			if tt.wantCanonHash != "" {
				canon, _ := canonicalRequest(req, emptySHA256)
				if got := hexSHA256(canon); got != tt.wantCanonHash {
					t.Errorf("canonical request hash = %s, want %s; canonical request:\n%s", got, tt.wantCanonHash, canon)
				}
			}
		})
	}
}

func TestSignV4SessionToken(t *testing.T) {
	req, _ := http.NewRequest(http.MethodGet, "https://b.s3.dualstack.eu-west-1.amazonaws.com/a%20b/c", nil)
	signV4(req, awsCredentials{AccessKeyID: "AK", SecretAccessKey: "SK", SessionToken: "TOKEN"}, "eu-west-1", "s3", emptySHA256, time.Now())
	if req.Header.Get("X-Amz-Security-Token") != "TOKEN" {
		t.Errorf("X-Amz-Security-Token = %q, want TOKEN", req.Header.Get("X-Amz-Security-Token"))
	}
	if !strings.Contains(req.Header.Get("Authorization"), "SignedHeaders=host;x-amz-date;x-amz-security-token,") {
		t.Errorf("Authorization %q does not sign the session token", req.Header.Get("Authorization"))
	}
	canon, _ := canonicalRequest(req, emptySHA256)
	if !strings.HasPrefix(canon, "GET\n/a%20b/c\n") {
		t.Errorf("canonical request starts %q, want the path encoded once", canon[:20])
	}
}

func TestAWSEscape(t *testing.T) {
	tests := []struct {
		in    string
		slash bool
		want  string
	}{
		{"a/b c", false, "a/b%20c"},
		{"a/b c", true, "a%2Fb%20c"},
		{"AZaz09-_.~", true, "AZaz09-_.~"},
		{"+*!()'é", false, "%2B%2A%21%28%29%27%C3%A9"},
	}
	for _, tt := range tests {
		if got := awsEscape(tt.in, tt.slash); got != tt.want {
			t.Errorf("awsEscape(%q, %v) = %q, want %q", tt.in, tt.slash, got, tt.want)
		}
	}
}
