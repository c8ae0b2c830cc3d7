package passwd

import "errors"

// ErrUnknownUser means a user name is in none of the target's passwd
// databases.
var ErrUnknownUser = errors.New("no such user in the target's passwd databases")

// ErrUnknownGroup means a group name is in none of the target's group
// databases.
var ErrUnknownGroup = errors.New("no such group in the target's group databases")
