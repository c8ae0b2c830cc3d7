package resource

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/flintboot/flint/config"
)

// s3Object is where an s3:// or arn: URL points.
type s3Object struct {
	// bucket is the bucket name, or for an access point <name>-<account>,
	// the first label of its host name.
	bucket      string
	accessPoint bool
	key         string
	versionID   string
	partition   string // aws, aws-cn, aws-us-gov
	region      string // an access point's; "" means look it up
}

// parseS3 reads s3://BUCKET/KEY[?versionId=V],
// arn:PARTITION:s3:::BUCKET/KEY and
// arn:PARTITION:s3:REGION:ACCOUNT:accesspoint/NAME/KEY (the forms config
// validation accepts).
func parseS3(u *url.URL) (s3Object, error) {
	o := s3Object{versionID: u.Query().Get("versionId"), partition: "aws"}
	if strings.EqualFold(u.Scheme, "s3") {
		o.bucket, o.key = u.Host, strings.TrimPrefix(u.Path, "/")
		if o.bucket == "" || o.key == "" {
			return o, errors.New("an s3 URL is s3://BUCKET/KEY")
		}
		return o, nil
	}
	sections := strings.SplitN(u.Scheme+":"+u.Opaque, ":", 6)
	if len(sections) != 6 || sections[2] != "s3" || sections[1] == "" {
		return o, errors.New("not an S3 ARN (arn:PARTITION:s3:REGION:ACCOUNT:RESOURCE)")
	}
	o.partition = sections[1]
	region, account, resource := sections[3], sections[4], sections[5]
	if rest, ok := strings.CutPrefix(resource, "accesspoint/"); ok {
		name, key, _ := strings.Cut(rest, "/")
		if name == "" || key == "" || region == "" || account == "" {
			return o, errors.New("an access point ARN is arn:PARTITION:s3:REGION:ACCOUNT:accesspoint/NAME/KEY")
		}
		o.bucket, o.key, o.region, o.accessPoint = name+"-"+account, key, region, true
		return o, nil
	}
	o.bucket, o.key, _ = strings.Cut(resource, "/")
	if o.bucket == "" || o.key == "" {
		return o, errors.New("a bucket ARN is arn:PARTITION:s3:::BUCKET/KEY")
	}
	return o, nil
}

// defaultRegion is where a partition's bucket region lookup starts when
// the instance's own region is unknown.
func defaultRegion(partition string) string {
	switch partition {
	case "aws-cn":
		return "cn-north-1"
	case "aws-us-gov":
		return "us-gov-west-1"
	}
	return "us-east-1"
}

func partitionOf(region string) string {
	switch {
	case strings.HasPrefix(region, "cn-"):
		return "aws-cn"
	case strings.HasPrefix(region, "us-gov-"):
		return "aws-us-gov"
	}
	return "aws"
}

// s3URL is the object's URL (bucketOnly: the bucket's, for the region
// lookup): dual-stack and virtual-hosted on AWS, path-style for bucket
// names with dots (their TLS certificate does not cover them) and with
// Options.S3Endpoint.
func (f *Fetcher) s3URL(o s3Object, region string, bucketOnly bool) (*url.URL, error) {
	path := "/" + o.key
	if bucketOnly {
		path = "/"
	}
	var u *url.URL
	switch {
	case f.opts.S3Endpoint != "":
		base, err := url.Parse(f.opts.S3Endpoint)
		if err != nil {
			return nil, fmt.Errorf("S3 endpoint: %w", unwrapURLError(err))
		}
		u = &url.URL{Scheme: base.Scheme, Host: base.Host, Path: strings.TrimSuffix(base.Path, "/") + "/" + o.bucket + path}
	default:
		suffix := "amazonaws.com"
		if strings.HasPrefix(region, "cn-") {
			suffix = "amazonaws.com.cn"
		}
		switch {
		case o.accessPoint:
			u = &url.URL{Scheme: "https", Host: o.bucket + ".s3-accesspoint.dualstack." + region + "." + suffix, Path: path}
		case strings.Contains(o.bucket, "."):
			u = &url.URL{Scheme: "https", Host: "s3.dualstack." + region + "." + suffix, Path: "/" + o.bucket + path}
		default:
			u = &url.URL{Scheme: "https", Host: o.bucket + ".s3.dualstack." + region + "." + suffix, Path: path}
		}
	}
	u.RawPath = awsEscape(u.Path, false)
	if o.versionID != "" && !bucketOnly {
		u.RawQuery = "versionId=" + awsEscape(o.versionID, true)
	}
	return u, nil
}

// fetchS3 gets an S3 object, signed with the instance role's credentials
// when the instance has a role, anonymously otherwise, through the same
// retries as any HTTP fetch.
func (f *Fetcher) fetchS3(ctx context.Context, u *url.URL, p pipeline, s *sink) error {
	o, err := parseS3(u)
	if err != nil {
		return fmt.Errorf("%s: %w", p.name, err)
	}
	creds, instanceRegion := f.awsCredentials(ctx)
	region := o.region
	if region == "" {
		hint := defaultRegion(o.partition)
		if instanceRegion != "" && (strings.EqualFold(u.Scheme, "s3") || partitionOf(instanceRegion) == o.partition) {
			hint = instanceRegion
		}
		region = f.bucketRegion(ctx, o, hint)
	}
	target, err := f.s3URL(o, region, false)
	if err != nil {
		return fmt.Errorf("%s: %w", p.name, err)
	}
	hr := f.newHTTPRequest(http.MethodGet, target.String(), p.name, http.Header{"X-Amz-Content-Sha256": {emptySHA256}})
	if creds != nil {
		hr.private = append(hr.private, "Authorization", "X-Amz-Date", "X-Amz-Security-Token")
		hr.sign = func(req *http.Request, now time.Time) error {
			signV4(req, *creds, region, "s3", emptySHA256, now)
			return nil
		}
	}
	return f.do(ctx, hr, p, s)
}

// bucketRegion asks S3 where a bucket lives: any answer to an anonymous
// HEAD of the bucket, 403 and 301 included, names the region in
// x-amz-bucket-region. When S3 cannot be asked, hint is used and the GET
// tells what went wrong.
func (f *Fetcher) bucketRegion(ctx context.Context, o s3Object, hint string) string {
	target, err := f.s3URL(o, hint, true)
	if err != nil {
		return hint
	}
	_, transport := f.snapshot(0)
	client := &http.Client{
		Transport:     transport,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	sched := backoff{base: f.opts.Backoff, limit: f.opts.MaxBackoff, noJitter: f.opts.NoJitter}
	for attempt := 1; attempt <= 3; attempt++ {
		rctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		req, err := http.NewRequestWithContext(rctx, http.MethodHead, target.String(), nil)
		if err != nil {
			cancel()
			return hint
		}
		req.Header = f.defaultHeader()
		resp, err := client.Do(req)
		if err == nil {
			resp.Body.Close()
			cancel()
			if r := resp.Header.Get("X-Amz-Bucket-Region"); r != "" {
				return r
			}
			return hint
		}
		cancel()
		f.log.Warn("S3 bucket region lookup failed", "bucket", o.bucket, "attempt", attempt, "error", scrub(err, target.String()))
		if !retryable(err) || ctx.Err() != nil {
			break
		}
		select {
		case <-ctx.Done():
			return hint
		case <-time.After(sched.next()):
		}
	}
	return hint
}

// awsState caches what the instance metadata service said.
type awsState struct {
	checked bool
	creds   *awsCredentials // nil: anonymous
	region  string
}

// awsCredentials returns the instance role's credentials (nil: fetch
// anonymously) and the instance's region ("" when unknown), asking the
// instance metadata service (IMDSv2, IMDSv1 when it gives no token) once,
// and again when the credentials are about to expire; never on a platform
// other than aws.
func (f *Fetcher) awsCredentials(ctx context.Context) (*awsCredentials, string) {
	f.mu.Lock()
	st := f.aws
	f.mu.Unlock()
	if st.checked && (st.creds == nil || time.Until(st.creds.Expiration) > 5*time.Minute) {
		return st.creds, st.region
	}
	if f.opts.Platform != "" && f.opts.Platform != "aws" {
		f.log.Info("not on aws: fetching from S3 anonymously, without asking the EC2 instance metadata service", "platform", f.opts.Platform)
		f.mu.Lock()
		f.aws = awsState{checked: true}
		f.mu.Unlock()
		return nil, ""
	}
	creds, region, err := f.imdsCredentials(ctx)
	if err != nil {
		f.log.Info("no EC2 instance role credentials, fetching from S3 anonymously", "error", err)
	}
	f.mu.Lock()
	f.aws = awsState{checked: true, creds: creds, region: region}
	f.mu.Unlock()
	return creds, region
}

func (f *Fetcher) imdsCredentials(ctx context.Context) (*awsCredentials, string, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	base := strings.TrimSuffix(f.opts.IMDSEndpoint, "/")
	token, err := f.metaRequest(ctx, http.MethodPut, base+"/latest/api/token",
		http.Header{"X-Aws-Ec2-Metadata-Token-Ttl-Seconds": {"21600"}})
	auth := http.Header{"X-Aws-Ec2-Metadata-Token": {string(token)}}
	var se *StatusError
	switch {
	case errors.As(err, &se):
		// The service answered but gave no token: IMDSv1, as the AWS
		// SDK Ignition uses falls back to it.
		f.log.Info("no IMDSv2 token: asking the instance metadata service without one (IMDSv1)", "error", err)
		auth = http.Header{}
	case err != nil:
		return nil, "", fmt.Errorf("instance metadata token: %w", err)
	}
	region, err := f.metaRequest(ctx, http.MethodGet, base+"/latest/meta-data/placement/region", auth)
	if err != nil {
		f.log.Info("EC2 instance region unknown", "error", err)
	}
	roles, err := f.metaRequest(ctx, http.MethodGet, base+"/latest/meta-data/iam/security-credentials/", auth)
	if err != nil {
		return nil, string(region), fmt.Errorf("instance role: %w", err)
	}
	role, _, _ := strings.Cut(strings.TrimSpace(string(roles)), "\n")
	if role == "" {
		return nil, string(region), errors.New("instance has no role")
	}
	raw, err := f.metaRequest(ctx, http.MethodGet, base+"/latest/meta-data/iam/security-credentials/"+url.PathEscape(role), auth)
	if err != nil {
		return nil, string(region), fmt.Errorf("instance role credentials: %w", err)
	}
	var c struct {
		Code            string
		AccessKeyID     string `json:"AccessKeyId"`
		SecretAccessKey string
		Token           string
		Expiration      time.Time
	}
	if err := json.Unmarshal(raw, &c); err != nil {
		return nil, string(region), fmt.Errorf("instance role credentials: %w", err)
	}
	if c.Code != "Success" || c.AccessKeyID == "" || c.SecretAccessKey == "" {
		return nil, string(region), fmt.Errorf("instance role credentials: code %q", c.Code)
	}
	return &awsCredentials{AccessKeyID: c.AccessKeyID, SecretAccessKey: c.SecretAccessKey, SessionToken: c.Token, Expiration: c.Expiration}, string(region), nil
}

// metaRequest makes one request to a link-local metadata service: no
// proxy, no retries, an answer of at most 1 MiB. Only 200 is success.
func (f *Fetcher) metaRequest(ctx context.Context, method, target string, h http.Header) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, method, target, nil)
	if err != nil {
		return nil, unwrapURLError(err)
	}
	req.Header = h.Clone()
	req.Header.Set("User-Agent", ignitionToken+" flint/"+f.opts.Version)
	resp, err := f.meta.Do(req)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", config.DescribeURL(target), scrub(err, target))
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		drain(resp.Body)
		return nil, &StatusError{URL: config.DescribeURL(target), Status: resp.StatusCode}
	}
	return io.ReadAll(io.LimitReader(resp.Body, 1<<20))
}
