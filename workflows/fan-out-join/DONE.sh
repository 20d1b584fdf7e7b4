#!/bin/bash
# Main's part ends here; the run ends when SUMMARY has too.
echo "<result>forked one worker per word</result>"
