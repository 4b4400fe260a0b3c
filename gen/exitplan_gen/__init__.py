# SPDX-License-Identifier: GPL-2.0-only
"""exitplan's generator: exit profiles + spec/*.yaml -> generated C."""
