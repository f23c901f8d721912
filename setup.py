"Packaging for ssbnn: every value comes from settings.ini (nbdev 2 layout)."
from configparser import ConfigParser
import shlex
import setuptools

cfg = ConfigParser(delimiters=['='])
cfg.read('settings.ini', encoding='utf-8')
cfg = cfg['DEFAULT']

expected = ('version description keywords author author_email license status min_python '
            'audience language lib_name user git_url').split()
missing = [k for k in expected if k not in cfg]
if missing: raise SystemExit(f"settings.ini is missing: {', '.join(missing)}")

licenses = {'apache2': 'Apache-2.0', 'mit': 'MIT'}   # SPDX expressions
statuses = ['1 - Planning', '2 - Pre-Alpha', '3 - Alpha', '4 - Beta', '5 - Production/Stable', '6 - Mature', '7 - Inactive']
py_versions = '3.10 3.11 3.12 3.13'.split()

lic = licenses.get(cfg['license'].lower(), cfg['license'])
min_python = cfg['min_python']
requirements = shlex.split(cfg.get('requirements', ''))
dev_requirements = shlex.split(cfg.get('dev_requirements', ''))
notebook_requirements = shlex.split(cfg.get('notebook_requirements', ''))
extras = {name: shlex.split(cfg.get(f'{name}_requirements', '')) for name in ('hub', 'tensorboard')}

setuptools.setup(
    name=cfg['lib_name'],
    license=lic,
    classifiers=[
        'Development Status :: ' + statuses[int(cfg['status'])],
        'Intended Audience :: ' + cfg['audience'].title(),
        'Natural Language :: ' + cfg['language'].title(),
    ] + ['Programming Language :: Python :: ' + o for o in py_versions[py_versions.index(min_python):]],
    url=cfg['git_url'],
    # namespace packages: ssbnn/assets (data, no __init__.py) is a package of its own, which setuptools warns about otherwise
    packages=setuptools.find_namespace_packages(include=[cfg['lib_path'], cfg['lib_path'] + '.*'], exclude=['*.__pycache__']),
    include_package_data=True,
    package_data={cfg['lib_path'] + '.assets': ['*']},
    install_requires=requirements,
    extras_require={'dev': dev_requirements, 'notebooks': notebook_requirements, **extras},
    dependency_links=cfg.get('dep_links', '').split(),
    python_requires='>=' + min_python,
    long_description=open('README.md', encoding='utf-8').read(),
    long_description_content_type='text/markdown',
    zip_safe=False,
    entry_points={
        'console_scripts': cfg.get('console_scripts', '').split(),
        'nbdev': [f"{cfg.get('lib_path')}={cfg.get('lib_path')}._modidx:d"],
    },
    version=cfg['version'],
    description=cfg['description'],
    keywords=cfg['keywords'],
    author=cfg['author'],
    author_email=cfg['author_email'],
)
