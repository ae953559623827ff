# SPDX-License-Identifier: Apache-2.0
"""The build step pyproject.toml names: the extension ppsim._core is CMake's target ppsim_python.

PPSIM_CMAKE_BUILD_DIR=DIR reuses a configured build directory (the test does, to build nothing
twice); otherwise the project is configured in setuptools' temporary directory for this Python.
"""
import os
import pathlib
import shutil
import subprocess
import sys

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

ROOT = pathlib.Path(__file__).resolve().parent


class CMakeBuild(build_ext):
    def build_extension(self, ext):
        build_dir = pathlib.Path(os.environ.get("PPSIM_CMAKE_BUILD_DIR") or pathlib.Path(self.build_temp, "cmake"))
        if not (build_dir / "CMakeCache.txt").exists():
            configure = ["cmake", "-S", str(ROOT), "-B", str(build_dir), "-DCMAKE_BUILD_TYPE=Release",
                         f"-DPython3_EXECUTABLE={sys.executable}", "-DPPSIM_CALIBRATE_CUDA=OFF"]
            try:
                import pybind11  # the build requirement pip installed, or Debian's under --no-build-isolation
                configure.append(f"-Dpybind11_DIR={pybind11.get_cmake_dir()}")
            except ImportError:
                pass
            subprocess.run(configure, check=True)
        jobs = str(os.cpu_count() or 1)
        subprocess.run(["cmake", "--build", str(build_dir), "--target", "ppsim_python", "-j", jobs], check=True)
        built = sorted((build_dir / "tools" / "python" / "ppsim").glob("_core*.so"))
        if not built:
            raise RuntimeError(f"ppsim: CMake built no ppsim/_core*.so under {build_dir} (is pybind11 found?)")
        target = pathlib.Path(self.get_ext_fullpath(ext.name))
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(built[-1], target)


setup(ext_modules=[Extension("ppsim._core", sources=[])], cmdclass={"build_ext": CMakeBuild})
