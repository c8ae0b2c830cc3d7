#!/bin/sh
# flint-failure: run by flint-failure.service when the boot isolates to
# emergency.target. It reads the entry the engine logged when a stage
# failed (MESSAGE_ID 22e4122142524666b1688f12057c3755, fields FLINT_STAGE
# and FLINT_ERROR: the error names the object and the cause, never file
# contents) and prints a short summary for whoever watches the console.
# It prints nothing when no flint unit failed: the emergency has another
# cause.

id=22e4122142524666b1688f12057c3755

# field NAME prints NAME of the last stage-failed entry of this boot.
field() {
    journalctl --quiet --boot --no-pager --lines=1 --output=cat \
        --output-fields="$1" "MESSAGE_ID=$id" 2> /dev/null
}

# The summary is written in one go, so that systemd's status lines (the
# isolate stops many units at this moment) do not cut through it.
stage=$(field FLINT_STAGE)
if [ -z "$stage" ]; then
    # flint could not log (killed, or no journal): name the failed unit.
    unit=$(systemctl list-units --failed --plain --no-legend 'flint-*' 2> /dev/null | sed -n '1s/ .*//p')
    [ -n "$unit" ] || exit 0
    printf '\nflint: provisioning failed: %s failed before flint could say why; the boot stops here.\nflint: read more: journalctl -u %s\n\n' "$unit" "$unit"
    exit 0
fi

case $stage in
    umount) unit=flint-mount.service ;;
    *) unit=flint-$stage.service ;;
esac

# The first lines of the error, each cut to a readable length: a failed
# command's stderr can be long. FLINT_ERROR is the exact error, whose
# lines (a command's stderr) are shown each after a "flint:" prefix, so a
# newline cannot pass for a line of its own; control characters (a
# terminal escape from a config's path) are dropped.
why=$(field FLINT_ERROR | sed -n -e 's/[[:cntrl:]]//g' -e '1,6s/^\(.\{400\}\).*/\1 .../' -e '1s/^/flint: why: /p' -e '2,6s/^/flint:      /p')
printf '\nflint: provisioning failed in the %s stage (%s); the boot stops here.\n%s\nflint: read more: journalctl -t flint (this stage only: journalctl -t flint FLINT_STAGE=%s)\n\n' \
    "$stage" "$unit" "$why" "$stage"
