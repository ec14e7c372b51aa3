"""Runs every bench/peers/*_peers.py against the tensorkit build and prints their tables."""
import argparse
import glob
import os
import subprocess
import sys

ap = argparse.ArgumentParser()
ap.add_argument("--build", default="build")
ap.add_argument("--only", default="", help="substring of the peer scripts to run")
args = ap.parse_args()
here = os.path.dirname(os.path.abspath(__file__))
failed = []
for script in sorted(glob.glob(os.path.join(here, "*_peers.py"))):
    if args.only and args.only not in os.path.basename(script):
        continue
    print(f"\n# {os.path.basename(script)}", flush=True)
    rc = subprocess.run([sys.executable, script, "--build", args.build]).returncode
    if rc != 0:
        failed.append(script)
if failed:
    print("failed:", *failed, file=sys.stderr)
    sys.exit(1)
